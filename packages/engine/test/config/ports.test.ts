/**
 * A port that is already taken stops start-up with an error naming the config key that chose the
 * port and, when the value came from `${VAR}`, the variable. Real occupied ports on 127.0.0.1.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the config's substitution syntax under test.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, createLogger } from '@flint/engine';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';

afterEach(cleanup);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flint-ports-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A port held by a plain TCP server until the test ends. */
async function takenPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  track(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

/** Starts an engine from `yaml` with `env`; resolves with the start-up error. */
async function startError(yaml: string, env: NodeJS.ProcessEnv): Promise<NodeJS.ErrnoException> {
  const file = join(dir, `config-${Math.random().toString(16).slice(2)}.yaml`);
  await writeFile(file, yaml);
  const engine = createEngine({ configPath: file, env, logger: createLogger({ level: 'silent' }) });
  track(() => engine.stop());
  return engine.start().then(
    () => {
      throw new Error('expected start-up to fail');
    },
    (err: NodeJS.ErrnoException) => err,
  );
}

describe('a port that is already taken', () => {
  it('names bridge.port and the variable it came from', async () => {
    const port = await takenPort();
    const error = await startError('bridge:\n  port: ${FLINT_T_BRIDGE_PORT}\n', { FLINT_T_BRIDGE_PORT: String(port) });
    expect(error.code).toBe('EADDRINUSE');
    expect(error.message).toBe(
      `cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE); the port is set by bridge.port (from \${FLINT_T_BRIDGE_PORT})`,
    );
  });

  it('names bridge.port alone when the port is written in the file', async () => {
    const port = await takenPort();
    const error = await startError(`bridge:\n  port: ${port}\n`, {});
    expect(error.message).toBe(`cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE); the port is set by bridge.port`);
  });

  it("names a module's port key, the module and the variable (or the default it used)", async () => {
    const port = await takenPort();
    const yaml = (ref: string) => `bridge:\n  port: 0\nmodules:\n  - name: flint-state\n  - name: flint-http\n    config:\n      port: ${ref}\n`;
    const fromEnv = await startError(yaml('${FLINT_T_HTTP_PORT}'), { FLINT_T_HTTP_PORT: String(port) });
    expect(fromEnv.code).toBe('EADDRINUSE');
    expect(fromEnv.message).toBe(
      `cannot listen on 127.0.0.1:${port}: address already in use (EADDRINUSE); the port is set by modules[1].config.port of flint-http (from \${FLINT_T_HTTP_PORT})`,
    );
    const fromDefault = await startError(yaml(`\${FLINT_T_HTTP_PORT:${port}}`), {});
    expect(fromDefault.message).toMatch(/the port is set by modules\[1\]\.config\.port of flint-http \(from the default of \$\{FLINT_T_HTTP_PORT:\d+\}\)$/);
  });
});
