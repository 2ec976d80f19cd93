import type { ErrorBody, TriggerTypeInfo } from '@flint/protocol';
import { FlintError } from '@flint/protocol';
import type { TriggerRecord } from '../core/api/triggers.js';
import type { Logger } from '../core/logger.js';
import { CLUSTER_OWNER, type TriggerRegistry } from '../core/triggers.js';
import type { ClusterTransport } from './transport.js';
import { type Subjects, decode, encode } from './wire.js';

/** A trigger registration forwarded to the engine whose worker provides its type. */
interface ForwardedTrigger {
  op: 'register' | 'unregister';
  /** The node the trigger was registered on. */
  from: string;
  record: TriggerRecord;
}

/**
 * Trigger types that a worker of another engine provides. Where no provider of a type is connected
 * here, this engine provides it on that engine's behalf: a trigger of the type registered here goes to
 * that engine, which applies it to its worker as a trigger of its own (`cluster:<node>:<id>`) and
 * answers with the worker's verdict. A worker of this engine that provides the type itself takes over.
 */
export class RemoteTriggerTypes {
  /** Per engine: the types provided here on its behalf, with what takes each back. */
  private readonly provided = new Map<string, Map<string, () => void>>();
  /** Per engine: the ids of the triggers it forwarded here (taken back when it leaves). */
  private readonly forwarded = new Map<string, Set<string>>();

  constructor(
    private readonly transport: ClusterTransport,
    private readonly subjects: Subjects,
    private readonly nodeId: string,
    private readonly triggers: TriggerRegistry,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.transport.subscribe(this.subjects.triggers(this.nodeId), (data, reply) => {
      void this.serve(decode<ForwardedTrigger>(data)).then(
        (answer) => reply?.(encode(answer)),
        (err: unknown) => reply?.(encode({ error: { code: 'trigger_registration_failed', message: (err as Error).message } })),
      );
    });
  }

  /** Makes the types provided here on behalf of engine `node` match what its workers provide. */
  sync(node: string, types: TriggerTypeInfo[]): void {
    const mine = this.provided.get(node) ?? new Map<string, () => void>();
    const wanted = new Set(types.map((t) => t.id));
    for (const [id, release] of mine) {
      if (!wanted.has(id)) {
        release();
        mine.delete(id);
      }
    }
    for (const type of types) {
      if (mine.has(type.id) || this.triggers.hasType(type.id)) continue; // provided here already
      const release = this.triggers.registerType(
        { ...type, description: `${type.description} (provided by a worker of engine ${node})` },
        {
          registerTrigger: (record) => this.forward(node, 'register', record),
          unregisterTrigger: (record) => this.forward(node, 'unregister', record),
        },
        CLUSTER_OWNER,
      );
      mine.set(type.id, release);
    }
    if (mine.size > 0) this.provided.set(node, mine);
    else this.provided.delete(node);
  }

  /** Engine `node` left: the types it provided are no longer provided here, and its forwarded triggers go. */
  drop(node: string): void {
    for (const release of this.provided.get(node)?.values() ?? []) release();
    this.provided.delete(node);
    for (const id of this.forwarded.get(node) ?? []) void this.triggers.unregister(id);
    this.forwarded.delete(node);
  }

  private async forward(node: string, op: ForwardedTrigger['op'], record: TriggerRecord): Promise<void> {
    const answer = decode<{ error?: ErrorBody }>(
      await this.transport.request(this.subjects.triggers(node), encode({ op, from: this.nodeId, record } satisfies ForwardedTrigger), 15_000),
    );
    if (answer?.error) throw new FlintError(answer.error.code, answer.error.message);
  }

  private async serve(request: ForwardedTrigger | undefined): Promise<{ error?: ErrorBody; parked?: boolean }> {
    if (!request || typeof request.from !== 'string' || !request.record || typeof request.record.id !== 'string') {
      return { error: { code: 'invalid_frame', message: 'a forwarded trigger needs its node and record' } };
    }
    const id = `cluster:${request.from}:${request.record.id}`;
    const ids = this.forwarded.get(request.from) ?? new Set<string>();
    this.forwarded.set(request.from, ids);
    if (request.op === 'unregister') {
      ids.delete(id);
      await this.triggers.unregister(id);
      return {};
    }
    ids.add(id);
    const outcome = await this.triggers.register({ ...request.record, id, owner: CLUSTER_OWNER });
    if (outcome.error) {
      ids.delete(id);
      this.log.debug({ trigger_id: request.record.id, node_id: request.from }, `forwarded trigger refused: ${outcome.error.message}`);
    }
    return outcome;
  }
}
