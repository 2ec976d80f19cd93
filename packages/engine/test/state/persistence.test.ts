/**
 * flint-state on the file_based adapter, end to end: the folder resolves against the config file,
 * data survives a restart, a folder that cannot be used stops start-up (never a silent in-memory
 * store), and — with the engine in a child process — every acknowledged write survives SIGKILL and a
 * graceful SIGTERM with writes in flight.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Engine, createEngine } from '@flint/engine';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanup, track } from '../support/cleanup.js';
import { type TestWorker, connectWorker, isListed, startTestEngine, startWorker } from '../support/harness.js';
import { RawClient } from '../support/raw-client.js';
import { type EngineProcess, runPool, spawnEngineProcess } from '../support/state/helpers.js';
import { outcome, waitFor, within } from '../support/util.js';

afterEach(cleanup);

const tempDirs: string[] = [];
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'flint-state-test-'));
  tempDirs.push(dir);
  return dir;
}

const fileState = (file_path: string, extra: Record<string, unknown> = {}) => ({
  modules: [{ name: 'flint-state', config: { adapter: { name: 'kv', config: { store_method: 'file_based', file_path, ...extra } } } }],
});

// biome-ignore lint/suspicious/noExplicitAny: results are arbitrary JSON
const call = (w: TestWorker, function_id: string, payload: unknown): Promise<any> => w.trigger({ function_id, payload });

/** Writes flint-config.yaml (class alias form, relative file_path) into `dir` and starts an engine from it. */
async function engineFromConfigFile(dir: string): Promise<Engine> {
  const configPath = join(dir, 'flint-config.yaml');
  writeFileSync(
    configPath,
    [
      'bridge:',
      '  port: 0',
      'log:',
      '  level: silent',
      'modules:',
      '  - class: modules::state::StateModule',
      '    config:',
      '      adapter: { name: kv, config: { store_method: file_based, file_path: ./state-data } }',
      '',
    ].join('\n'),
  );
  const engine = createEngine({ configPath });
  track(() => engine.stop());
  await engine.start();
  return engine;
}

describe('file_based state in an in-process engine', () => {
  it('a relative file_path resolves against the config file folder (not the working directory) and data survives a restart', async () => {
    const dir = tempDir();
    expect(process.cwd()).not.toBe(dir);
    const cwdFolder = join(process.cwd(), 'state-data');
    const cwdFolderExisted = existsSync(cwdFolder);

    const first = await engineFromConfigFile(dir);
    expect(first.moduleNames).toEqual(['flint-state']);
    let w = await startWorker('flint', first);
    await call(w, 'state::set', { scope: 'users', key: 'ada', value: { name: 'Ada' } });
    await call(w, 'state::set', { scope: 'users', key: 'bob', value: null });
    await call(w, 'state::set', { scope: 'tmp', key: 'gone', value: 1 });
    await call(w, 'state::delete', { scope: 'tmp', key: 'gone' });
    for (let i = 0; i < 5; i++) await call(w, 'state::update', { scope: 'counters', key: 'c', ops: [{ type: 'increment', path: 'n', by: 1 }] });
    const odd = { scope: '../odd/ scope ✓\n', key: 'key\u0000with\ttabs "quotes" \u2028', value: { text: 'line\nbreak \u2029 ünï', n: -0.5, deep: [[{}]] } };
    await call(w, 'state::set', odd);

    expect(statSync(join(dir, 'state-data')).isDirectory()).toBe(true);
    expect(readdirSync(join(dir, 'state-data')).length).toBeGreaterThan(0);
    expect(existsSync(cwdFolder)).toBe(cwdFolderExisted);

    await w.shutdown();
    await first.stop();

    const second = await engineFromConfigFile(dir);
    w = await startWorker('flint', second);
    expect(await call(w, 'state::get', { scope: 'users', key: 'ada' })).toEqual({ name: 'Ada' });
    expect(await call(w, 'state::get', { scope: 'counters', key: 'c' })).toEqual({ n: 5 });
    expect(await call(w, 'state::get', { scope: 'tmp', key: 'gone' })).toBeNull();
    expect(await call(w, 'state::get', { scope: odd.scope, key: odd.key })).toEqual(odd.value);
    expect(await call(w, 'state::list_groups', {})).toEqual({ groups: [odd.scope, 'counters', 'users'].sort() });
    // The key holding null still exists after the restart.
    expect(await call(w, 'state::set', { scope: 'users', key: 'bob', value: 2 })).toEqual({ old_value: null, new_value: 2 });
    expect((await call(w, 'state::list', { scope: 'users' })).length).toBe(2);
    expect(await call(w, 'state::update', { scope: 'counters', key: 'c', ops: [{ type: 'increment', path: 'n', by: 1 }] })).toEqual({
      old_value: { n: 5 },
      new_value: { n: 6 },
    });
  });

  it('a file_path whose parent is a regular file (or a dangling symlink) stops start-up with an error naming the path (no in-memory fall-back)', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'not-a-folder'), 'plain file');
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
    for (const target of [join(dir, 'not-a-folder', 'state'), join(dir, 'dangling', 'state')]) {
      const engine = createEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, ...fileState(target) } });
      track(() => engine.stop());
      const result = await outcome(within(engine.start(), 5000, 'engine.start()'));
      expect(result.ok, target).toBe(false);
      expect(!result.ok && result.error.message).toContain(target);
      // Nothing is served: no state functions, and the bridge is closed again.
      expect(isListed(engine, 'state::get')).toBe(false);
      expect(engine.bridgeUrl).not.toBe('');
      expect((await outcome(RawClient.connect(engine.bridgeUrl))).ok).toBe(false);
    }
  });

  it('the same from a config file: the relative path is reported resolved against the config folder', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'blocker'), 'plain file');
    const configPath = join(dir, 'flint-config.yaml');
    writeFileSync(
      configPath,
      'bridge: { port: 0 }\nlog: { level: silent }\nmodules:\n  - name: flint-state\n    config: { adapter: { name: kv, config: { store_method: file_based, file_path: ./blocker/state } } }\n',
    );
    const engine = createEngine({ configPath });
    track(() => engine.stop());
    const result = await outcome(engine.start());
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).toContain(join(dir, 'blocker', 'state'));
  });

  it.skipIf(process.platform !== 'linux')('a folder that cannot be created (under /proc) stops start-up with an error naming it', async () => {
    // Even root cannot create a directory inside /proc; the kernel answers ENOENT there, which sends a
    // recursive fs.mkdir into an endless retry loop — so this runs in a child process that cleanup() kills.
    const target = `/proc/flint-state-${process.pid}/state`;
    const result = await outcome(spawnEngineProcess(target, 64 * 1024, 5000));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).toContain('failed to start');
    expect(!result.ok && result.error.message).toContain(target);
  });

  it('a folder in use by a running engine is refused to a second engine', async () => {
    const folder = join(tempDir(), 'shared');
    await startTestEngine(fileState(folder));
    const second = createEngine({ config: { bridge: { port: 0 }, log: { level: 'silent' }, ...fileState(folder) } });
    track(() => second.stop());
    const result = await outcome(second.start());
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).toMatch(/lock/i);
    expect(!result.ok && result.error.message).toContain(folder);
  });
});

// ---------------------------------------------------------------------------------------------
// An engine in a child process: SIGKILL and SIGTERM with writes in flight
// ---------------------------------------------------------------------------------------------

const valueFor = (key: string, i: number) => ({ key, i, pad: 'p'.repeat(i % 300) });

async function connect(proc: EngineProcess): Promise<TestWorker> {
  const w = connectWorker('flint', proc.bridgeUrl, { reconnect: { maxRetries: 0 } });
  await waitFor(async () => (await call(w, 'state::list_groups', {})) !== undefined, 5000, 'the engine process to answer');
  return w;
}

/** Checks that every key in `acked` holds its value (state::get, 64 in flight) and that state::list agrees. */
async function expectAllPresent(w: TestWorker, scope: string, acked: Map<string, unknown>, extraAllowed: (v: unknown) => boolean = () => false) {
  const missing: string[] = [];
  const wrong: string[] = [];
  const keys = [...acked.keys()];
  await runPool(keys.length, 64, async (i) => {
    const key = keys[i] as string;
    const got = await call(w, 'state::get', { scope, key });
    if (got === null) missing.push(key);
    else if (JSON.stringify(got) !== JSON.stringify(acked.get(key))) wrong.push(key);
  });
  expect(missing, `acknowledged keys missing after restart (${missing.length})`).toEqual([]);
  expect(wrong, 'acknowledged keys with a wrong value').toEqual([]);
  const listed = (await call(w, 'state::list', { scope })) as { key: string }[];
  const unexpected = listed.filter((v) => !acked.has(v.key) && !extraAllowed(v));
  expect(unexpected).toEqual([]);
  for (const v of listed) if (acked.has(v.key)) expect(v).toEqual(acked.get(v.key));
  expect(listed.length).toBeGreaterThanOrEqual(acked.size);
}

describe('file_based state survives the engine process dying', () => {
  it('1,000 acknowledged writes (64 in flight) all survive SIGKILL, also when the kill lands mid-flight', { timeout: 45_000 }, async () => {
    const folder = join(tempDir(), 'state');
    // A small compaction threshold so snapshots are written (and possibly interrupted) during the run.
    const proc = await spawnEngineProcess(folder, 64 * 1024);
    const w = await connect(proc);

    // Phase 1: 1,000 sets, 200 increments of one counter, 50 sets that are deleted again — all acknowledged.
    const acked = new Map<string, unknown>();
    const failures: string[] = [];
    await runPool(1000, 64, async (i) => {
      const key = `k${i}`;
      const value = valueFor(key, i);
      try {
        await call(w, 'state::set', { scope: 'crash', key, value });
        acked.set(key, value);
      } catch (err) {
        failures.push(`${key}: ${(err as Error).message}`);
      }
    });
    expect(failures).toEqual([]);
    expect(acked.size).toBe(1000);
    await runPool(200, 64, () => call(w, 'state::update', { scope: 'counter', key: 'c', ops: [{ type: 'increment', path: 'n', by: 1 }] }));
    await runPool(50, 25, (i) => call(w, 'state::set', { scope: 'deleted', key: `d${i}`, value: i }));
    await runPool(50, 25, (i) => call(w, 'state::delete', { scope: 'deleted', key: `d${i}` }));

    // Phase 2: more writes, and SIGKILL once 100 of them are acknowledged (the rest are in flight).
    const extraAcked = new Map<string, unknown>();
    let killed = false;
    const phase2 = runPool(1000, 64, async (i) => {
      const key = `x${i}`;
      const value = valueFor(key, i);
      try {
        await call(w, 'state::set', { scope: 'extra', key, value });
        extraAcked.set(key, value);
        if (extraAcked.size >= 100 && !killed) {
          killed = true;
          proc.child.kill('SIGKILL');
        }
      } catch {
        // not acknowledged: may or may not have been stored
      }
    });
    const exit = await proc.exited;
    expect(exit.signal).toBe('SIGKILL');
    await w.shutdown(); // fails the calls that were in flight
    await phase2;
    expect(extraAcked.size).toBeGreaterThanOrEqual(100);
    expect(extraAcked.size).toBeLessThan(1000);

    // Restart on the same folder (the dead process's lock is taken over).
    const again = await spawnEngineProcess(folder, 64 * 1024);
    const w2 = await connect(again);
    await expectAllPresent(w2, 'crash', acked);
    expect(await call(w2, 'state::get', { scope: 'counter', key: 'c' })).toEqual({ n: 200 });
    expect(await call(w2, 'state::list', { scope: 'deleted' })).toEqual([]);
    // Unacknowledged extra writes may or may not be there, but if they are, with the right value.
    await expectAllPresent(w2, 'extra', extraAcked, (v) => {
      const { key, i } = v as { key: string; i: number };
      return JSON.stringify(v) === JSON.stringify(valueFor(key, i));
    });
    expect((await call(w2, 'state::list_groups', {})).groups).toEqual(['counter', 'crash', 'extra']);
    // And the restarted store takes writes.
    expect(await call(w2, 'state::set', { scope: 'crash', key: 'k0', value: 'after' })).toEqual({ old_value: valueFor('k0', 0), new_value: 'after' });
    await w2.shutdown();
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
  });

  it('a graceful stop (SIGTERM → engine.stop()) with writes in flight loses nothing acknowledged', { timeout: 30_000 }, async () => {
    const folder = join(tempDir(), 'state');
    const proc = await spawnEngineProcess(folder, 64 * 1024);
    const w = await connect(proc);
    const acked = new Map<string, unknown>();
    let stopped = false;
    const writes = runPool(3000, 64, async (i) => {
      const key = `g${i}`;
      const value = valueFor(key, i);
      try {
        await call(w, 'state::set', { scope: 'graceful', key, value });
        acked.set(key, value);
        if (acked.size >= 300 && !stopped) {
          stopped = true;
          proc.child.kill('SIGTERM');
        }
      } catch {
        // refused or cut off by the shutdown: not acknowledged
      }
    });
    const exit = await proc.exited;
    expect(exit, proc.stderr()).toEqual({ code: 0, signal: null });
    await w.shutdown();
    await writes;
    expect(acked.size).toBeGreaterThanOrEqual(300);

    const again = await spawnEngineProcess(folder, 64 * 1024);
    const w2 = await connect(again);
    await expectAllPresent(w2, 'graceful', acked, (v) => {
      const { key, i } = v as { key: string; i: number };
      return JSON.stringify(v) === JSON.stringify(valueFor(key, i));
    });
    await w2.shutdown();
  });
});
