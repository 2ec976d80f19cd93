import { errorMessage } from '../lib/errors.js';
import type { ModuleScope } from './context.js';
import type { Logger } from './logger.js';

/** A module that did not finish a shutdown phase before the deadline. */
export interface Holdup {
  module: string;
  phase: 'drain' | 'stop';
}

/**
 * Starts modules in config order; on shutdown drains them all at once and stops them in reverse
 * start order, all within one deadline. A module still busy at the deadline is named and left
 * behind, so that one stuck module cannot keep the engine from exiting.
 */
export class ModuleRunner {
  /** Scopes whose module's start() was called (also the one that failed), in start order. */
  private readonly started: ModuleScope[] = [];

  constructor(
    private readonly scopes: readonly ModuleScope[],
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    for (const scope of this.scopes) {
      this.started.push(scope);
      await scope.module.start(scope.ctx);
    }
  }

  /** Stops every module's listeners accepting (synchronously, first thing at shutdown). */
  stopAccepting(): void {
    for (const scope of this.started) scope.stopAccepting();
  }

  /** Drains every started module at once; resolves by the deadline with the modules still draining. */
  drain(deadline: number): Promise<Holdup[]> {
    return Promise.all(
      this.started.map((scope) =>
        this.bounded(scope, 'drain', deadline, async () => {
          await scope.module.drain?.();
        }),
      ),
    ).then((holdups) => holdups.filter((h) => h !== undefined));
  }

  /** Stops modules in reverse start order, each then released (its triggers, listeners, adapters…). */
  async stop(deadline: number): Promise<Holdup[]> {
    const holdups: Holdup[] = [];
    for (const scope of [...this.started].reverse()) {
      const holdup = await this.bounded(scope, 'stop', deadline, async () => {
        await scope.module.stop?.();
        await scope.release();
      });
      if (holdup) holdups.push(holdup);
    }
    return holdups;
  }

  /** Runs one phase of one module until it ends or the deadline passes; failures are logged. */
  private bounded(scope: ModuleScope, phase: Holdup['phase'], deadline: number, run: () => Promise<void>): Promise<Holdup | undefined> {
    const module = scope.module.name;
    const work = run().then(
      () => undefined,
      (err: unknown) => {
        this.logger.error({ module }, `module failed to ${phase} cleanly: ${errorMessage(err)}`);
        return undefined;
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Holdup>((resolve) => {
      timer = setTimeout(() => resolve({ module, phase }), Math.max(0, deadline - Date.now()));
    });
    return Promise.race([work, late]).then((holdup) => {
      clearTimeout(timer);
      if (holdup) this.logger.warn({ module }, `module ${module} held shutdown up: still in ${phase} at the shutdown deadline; going on without it`);
      return holdup;
    });
  }
}
