/**
 * The `file_based` KvStore: state survives close/reopen and `kill -9` (every acknowledged write), torn
 * and corrupt log records are skipped without failing, the folder is locked against a second engine,
 * unusable folders stop start-up with a clear error, and compaction keeps every write. Crash tests run
 * a child process (support/kv/writer.mjs) that prints each key only after its call resolved, SIGKILL it
 * and reopen the folder. Everything goes through the public `openAdapter`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KvStore, type Logger, openAdapter } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLog } from '../support/log-capture.js';
import { tempRoot } from '../support/temp-root.js';
import { waitFor } from '../support/util.js';

const supportScript = (name: string) => fileURLToPath(new URL(`../support/kv/${name}`, import.meta.url));
const writerScript = supportScript('writer.mjs');
const holderScript = supportScript('holder.mjs');
const tryOpenScript = supportScript('try-open.mjs');
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

const temp = tempRoot('flint-kv-file-test-');
const stores: KvStore[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const store of stores.splice(0)) await store.close().catch(() => {});
});

function newDir(): string {
  return temp.newDir('state');
}

async function open(
  filePath: string,
  { compactAfterBytes = 64 * 1024 * 1024, configDir = temp.path, logger = undefined as Logger | undefined } = {},
): Promise<KvStore> {
  const store = await openAdapter(
    'kv',
    { name: 'kv', config: { store_method: 'file_based', file_path: filePath, compact_after_bytes: compactAfterBytes } },
    logger ? { configDir, logger } : { configDir },
  );
  stores.push(store);
  return store;
}

async function reopen(store: KvStore, dir: string, options: { compactAfterBytes?: number } = {}): Promise<KvStore> {
  await store.close();
  return open(dir, options);
}

/** Every scope → key → value, for comparing whole states. */
async function dump(store: KvStore, scopes: string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const scope of scopes) out[scope] = (await store.list(scope)).map((v) => JSON.stringify(v)).sort();
  return out;
}

async function logFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => /^log-\d+\.jsonl$/.test(name)).sort();
}

/** Opens `dir` with a logger that collects the store's warnings. */
async function openCollectingWarnings(dir: string): Promise<{ result: KvStore; warnings: string[] }> {
  const log = captureLog('warn');
  const result = await open(dir, { logger: log.logger });
  await new Promise((resolve) => setImmediate(resolve)); // the capture parses lines as its stream delivers them
  return { result, warnings: log.records.map((r) => String(r.msg)) };
}

interface Child {
  child: ChildProcess;
  lines: string[];
  exited: Promise<void>;
  stderr: () => string;
}

function spawnNode(script: string, args: string[]): Child {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: string[] = [];
  let rest = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop()!;
    lines.push(...parts);
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, lines, exited, stderr: () => stderr };
}

/**
 * Runs the writer child until at least `minAcks` sets are acknowledged, SIGKILLs it, reopens the folder
 * and checks every acknowledged set, update and delete.
 */
async function crashAndCheck(dir: string, minAcks: number, compactAfterBytes: number): Promise<{ acked: number; seen: number }> {
  const writer = spawnNode(writerScript, [dir, '1000000', String(compactAfterBytes)]);
  let acks = 0;
  await waitFor(
    () => {
      if (writer.child.exitCode !== null) throw new Error(`writer exited early (${writer.child.exitCode}): ${writer.stderr()}`);
      acks = writer.lines.reduce((n, line) => n + (line.startsWith('a ') ? 1 : 0), 0);
      return acks >= minAcks;
    },
    15_000,
    `${minAcks} acknowledged writes`,
  );
  writer.child.kill('SIGKILL');
  await writer.exited;
  expect(writer.child.signalCode).toBe('SIGKILL');

  const set = new Set<number>();
  const updated = new Set<number>();
  const deleted = new Set<number>();
  for (const line of writer.lines) {
    const [op, index] = line.split(' ');
    const i = Number(index);
    if (op === 'a') set.add(i);
    else if (op === 'u') updated.add(i);
    else if (op === 'd') deleted.add(i);
  }
  const store = await open(dir, { compactAfterBytes });
  for (const i of set) {
    const entry = await store.get('crash', `k${i}`);
    if (deleted.has(i)) {
      expect(entry, `k${i} was deleted (acknowledged)`).toEqual({ exists: false, value: null });
    } else if (i % 5 === 1 && !entry.exists) {
      // Its delete was under way when the process died: done or not, both are right for an unacknowledged call.
    } else {
      expect(entry.exists, `k${i} was set (acknowledged)`).toBe(true);
      expect((entry.value as { i: number }).i).toBe(i);
      if (updated.has(i)) expect((entry.value as { updated?: boolean }).updated, `k${i} was updated (acknowledged)`).toBe(true);
    }
  }
  // The store is usable after the crash and a new write survives another reopen.
  await store.set('after', 'crash', { ok: true });
  const again = await reopen(store, dir, { compactAfterBytes });
  expect(await again.get('after', 'crash')).toEqual({ exists: true, value: { ok: true } });
  return { acked: set.size, seen: (await again.list('crash')).length };
}

describe('file_based: persistence', () => {
  it('keeps sets, updates and deletes across close and reopen', async () => {
    const dir = newDir();
    const store = await open(dir);
    expect(store.kind).toBe('file_based');
    expect(await store.set('users', 'alice', { name: 'Alice', tags: ['a', 'b'] })).toEqual({ existed: false, old_value: null });
    expect(await store.set('users', 'alice', { name: 'Alice', age: 30 })).toEqual({ existed: true, old_value: { name: 'Alice', tags: ['a', 'b'] } });
    await store.set('users', 'bob', null);
    await store.set('users', 'carol', 'text with "quotes", \\ and ünïcode ✓ and \n newline');
    await store.set('counters', 'hits', 1);
    const updated = await store.update('counters', 'hits', (current) => ({ value: (current.value as number) + 41, extra: 'ok' }));
    expect(updated).toEqual({ existed: true, old_value: 1, new_value: 42, extra: 'ok' });
    await store.set('gone', 'x', 1);
    expect(await store.delete('gone', 'x')).toEqual({ existed: true, old_value: 1 });
    expect(await store.delete('gone', 'never')).toEqual({ existed: false, old_value: null });
    const before = await dump(store, ['users', 'counters', 'gone']);

    const again = await reopen(store, dir);
    expect(await again.listGroups()).toEqual(['counters', 'users']);
    expect(await dump(again, ['users', 'counters', 'gone'])).toEqual(before);
    expect(await again.get('users', 'bob')).toEqual({ exists: true, value: null });
    expect(await again.get('users', 'carol')).toEqual({ exists: true, value: 'text with "quotes", \\ and ünïcode ✓ and \n newline' });
    expect(await again.get('counters', 'hits')).toEqual({ exists: true, value: 42 });
    expect(await again.get('gone', 'x')).toEqual({ exists: false, value: null });
  });

  it('keeps what it would read back after a restart (a JSON copy) and refuses values JSON cannot hold', async () => {
    const dir = newDir();
    const store = await open(dir);
    const value = { at: new Date(0), nested: { list: [1, 2] } };
    await store.set('s', 'k', value);
    value.nested.list.push(3); // the caller changing its object later does not change the stored value
    expect(await store.get('s', 'k')).toEqual({ exists: true, value: { at: '1970-01-01T00:00:00.000Z', nested: { list: [1, 2] } } });
    await store.set('s', 'undef', undefined);
    expect(await store.get('s', 'undef')).toEqual({ exists: true, value: null });
    await expect(store.set('s', 'big', 10n)).rejects.toMatchObject({ code: 'invalid_payload' });
    expect(await store.get('s', 'big')).toEqual({ exists: false, value: null });
    const again = await reopen(store, dir);
    expect(await again.get('s', 'k')).toEqual({ exists: true, value: { at: '1970-01-01T00:00:00.000Z', nested: { list: [1, 2] } } });
  });

  it('flushes writes still in flight when it is closed, then refuses calls', async () => {
    const dir = newDir();
    const store = await open(dir);
    const writes = Array.from({ length: 200 }, (_, i) => store.set('s', `k${i}`, i));
    await store.close();
    await Promise.all(writes);
    await expect(store.get('s', 'k1')).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(store.set('s', 'late', 1)).rejects.toMatchObject({ code: 'store_unavailable' });
    await store.close(); // idempotent
    const again = await open(dir);
    expect((await again.list('s')).length).toBe(200);
  });

  it('resolves a relative file_path against the config folder, not the working directory', async () => {
    const configDir = join(temp.path, 'config-folder');
    await mkdir(configDir);
    const relative = `./rel-state-${process.pid}/nested`;
    const store = await open(relative, { configDir });
    await store.set('s', 'k', 'v');
    expect(existsSync(join(configDir, relative, 'LOCK'))).toBe(true);
    expect(existsSync(join(process.cwd(), relative))).toBe(false);
    await store.close();
    const again = await open(join(configDir, relative));
    expect(await again.get('s', 'k')).toEqual({ exists: true, value: 'v' });
  });
});

describe('file_based: permissions', () => {
  it('creates its folder private to the engine user (0700) and its files 0600; an existing folder keeps its mode', async () => {
    const previous = process.umask(0o022);
    try {
      const dir = join(newDir(), 'nested', 'state');
      const store = await open(dir, { compactAfterBytes: 256 });
      for (let i = 0; i < 30; i++) await store.set('s', `k${i}`, { i, pad: 'x'.repeat(20) }); // forces a snapshot too
      await store.close();
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect((await stat(join(dir, '..'))).mode & 0o777).toBe(0o755); // a parent it made has the usual mode
      const files = (await readdir(dir)).filter((f) => !f.startsWith('.') && f !== 'lock');
      expect(files.length).toBeGreaterThan(1);
      for (const f of files) expect((await stat(join(dir, f))).mode & 0o777, f).toBe(0o600);

      const existing = newDir();
      await mkdir(existing, { mode: 0o750 });
      await chmod(existing, 0o750);
      const again = await open(existing);
      await again.close();
      expect((await stat(existing)).mode & 0o777).toBe(0o750);
    } finally {
      process.umask(previous);
    }
  });
});

describe('file_based: crashes', () => {
  it('keeps every acknowledged write after kill -9 of the writing process', async () => {
    const { acked, seen } = await crashAndCheck(newDir(), 1000, 64 * 1024 * 1024);
    expect(acked).toBeGreaterThanOrEqual(1000);
    expect(seen).toBeGreaterThan(0);
  });

  it('keeps every acknowledged write after kill -9 during heavy writes with constant compaction', async () => {
    // A tiny compaction threshold: a new log and a snapshot after nearly every batch, so the kill lands mid-compaction.
    for (const minAcks of [1000, 2500]) {
      const dir = newDir();
      const { acked } = await crashAndCheck(dir, minAcks, 8192);
      expect(acked).toBeGreaterThanOrEqual(minAcks);
      const names = await readdir(dir);
      expect(names).toContain('snapshot.jsonl');
    }
  });

  it('skips a torn last record, cuts it off, and appends cleanly after it', async () => {
    const dir = newDir();
    const store = await open(dir);
    for (let i = 0; i < 5; i++) await store.set('t', `k${i}`, { i });
    await store.close();
    const [log] = await logFiles(dir);
    const logPath = join(dir, log!);
    const good = await readFile(logPath, 'utf8');
    // A whole line with a wrong checksum, then half a record without its newline: what a crash mid-write can leave.
    await appendFile(logPath, `deadbeef {"o":"s","s":"t","k":"bad","v":1}\n0badc0de {"o":"s","s":"t","k":"ha`);

    const { result: again, warnings } = await openCollectingWarnings(dir);
    expect(warnings.some((w) => w.includes(logPath) && w.includes('cut off'))).toBe(true);
    expect((await again.list('t')).length).toBe(5);
    expect(await again.get('t', 'bad')).toEqual({ exists: false, value: null });
    expect(await readFile(logPath, 'utf8')).toBe(good);
    await again.set('t', 'k5', { i: 5 });

    const third = await reopen(again, dir);
    expect((await third.list('t')).map((v) => (v as { i: number }).i).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('skips garbage without a newline and zero bytes at the end of the log', async () => {
    const dir = newDir();
    const store = await open(dir);
    await store.set('t', 'k', 1);
    await store.close();
    const [log] = await logFiles(dir);
    await appendFile(join(dir, log!), Buffer.alloc(4096)); // a tail of zeros, as some file systems leave after a power cut
    const again = await open(dir);
    expect(await again.get('t', 'k')).toEqual({ exists: true, value: 1 });
    await again.set('t', 'k2', 2);
    const third = await reopen(again, dir);
    expect(await third.list('t')).toEqual([1, 2]);
  });

  it('skips a corrupt record in the middle of the log with a warning and applies the rest', async () => {
    const dir = newDir();
    const store = await open(dir);
    for (let i = 0; i < 3; i++) await store.set('m', `k${i}`, `value-${i}`);
    await store.close();
    const [log] = await logFiles(dir);
    const logPath = join(dir, log!);
    const lines = (await readFile(logPath, 'utf8')).split('\n');
    lines[1] = lines[1]!.replace('value-1', 'value-X'); // the checksum no longer matches
    await writeFile(logPath, lines.join('\n'));

    const { result: again, warnings } = await openCollectingWarnings(dir);
    expect(warnings.some((w) => w.includes(logPath) && w.includes('skipped 1 damaged record'))).toBe(true);
    expect(await again.get('m', 'k0')).toEqual({ exists: true, value: 'value-0' });
    expect(await again.get('m', 'k1')).toEqual({ exists: false, value: null });
    expect(await again.get('m', 'k2')).toEqual({ exists: true, value: 'value-2' });
    await again.set('m', 'k3', 'value-3');
    const third = await reopen(again, dir);
    expect((await third.list('m')).sort()).toEqual(['value-0', 'value-2', 'value-3']);
  });
});

describe('file_based: lock', () => {
  it('refuses a second store on the same folder in this process, naming the folder and the pid', async () => {
    const dir = newDir();
    const first = await open(dir);
    const second = open(dir);
    await expect(second).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(second).rejects.toThrow(`state directory ${dir} is locked by process ${process.pid}`);
    // The same folder reached through a symbolic link is the same folder.
    const link = `${dir}-link`;
    await symlink(dir, link);
    await expect(open(link)).rejects.toMatchObject({ code: 'store_unavailable' });
    await first.close();
    const third = await open(dir);
    expect(await third.listGroups()).toEqual([]);
  });

  it('refuses a folder another process holds, and takes it over once that process is dead', async () => {
    const dir = newDir();
    const holder = spawnNode(holderScript, [dir]);
    await waitFor(
      () => {
        if (holder.child.exitCode !== null) throw new Error(`holder exited early: ${holder.stderr()}`);
        return holder.lines.some((l) => l.startsWith('ready '));
      },
      5000,
      'the holder to open the store',
    );
    const pid = holder.child.pid!;
    await expect(open(dir)).rejects.toThrow(`state directory ${dir} is locked by process ${pid} (another engine is using it)`);

    holder.child.kill('SIGKILL');
    await holder.exited;
    // The LOCK of the killed process is still there; its pid is dead, so the lock is stale.
    expect(JSON.parse(await readFile(join(dir, 'LOCK'), 'utf8')).pid).toBe(pid);
    const store = await open(dir);
    expect(await store.get('holder', 'pid')).toEqual({ exists: true, value: pid });
    expect(JSON.parse(await readFile(join(dir, 'LOCK'), 'utf8')).pid).toBe(process.pid);
    await store.close();
    expect(existsSync(join(dir, 'LOCK'))).toBe(false);
  });

  it.skipIf(process.platform !== 'linux')('takes over the folder of a killed holder that is still a zombie (not yet reaped by its parent)', async () => {
    const dir = newDir();
    // `sh` starts the holder in the background and is replaced by `sleep`, which never reaps it.
    const parent = spawn('sh', ['-c', `"${process.execPath}" "${holderScript}" "${dir}" & exec sleep 60`], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(parent);
    let out = '';
    parent.stdout!.setEncoding('utf8');
    parent.stdout!.on('data', (chunk: string) => {
      out += chunk;
    });
    const ready = await waitFor(() => /^ready (\d+)$/m.exec(out), 5000, 'the holder to open the store');
    const pid = Number(ready[1]);
    expect(pid).not.toBe(parent.pid);
    await expect(open(dir)).rejects.toThrow(`is locked by process ${pid}`);

    process.kill(pid, 'SIGKILL');
    const state = () => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    };
    await waitFor(() => state() === 'Z', 5000, 'the holder to be a zombie');
    const store = await open(dir);
    expect(await store.get('holder', 'pid')).toEqual({ exists: true, value: pid });
    expect(state()).toBe('Z'); // still unreaped: the zombie itself was taken for gone
    await store.close();
    parent.kill('SIGKILL'); // the sleeper; the zombie then goes to init, which reaps it
  });

  it('takes over a stale LOCK of a dead pid or of an earlier process with our own pid, refuses one from another host', async () => {
    const dir = newDir();
    await mkdir(dir, { recursive: true });
    const exited = spawnNode('-e', ['']);
    exited.child.kill('SIGKILL');
    await exited.exited;
    for (const pid of [exited.child.pid!, process.pid]) {
      await writeFile(join(dir, 'LOCK'), JSON.stringify({ pid, hostname: hostname(), started: new Date(0).toISOString() }));
      const store = await open(dir);
      await store.close();
    }
    await writeFile(join(dir, 'LOCK'), JSON.stringify({ pid: 4242, hostname: 'elsewhere.example', started: new Date(0).toISOString() }));
    await expect(open(dir)).rejects.toThrow(`state directory ${dir} is locked by process 4242 on host elsewhere.example`);
  });
});

describe('file_based: unusable folders', () => {
  it('stops with a clear error when the folder cannot be created (a parent is a regular file)', async () => {
    const file = temp.newDir('plain-file');
    await writeFile(file, 'not a folder');
    const path = join(file, 'state');
    const attempt = open(path);
    await expect(attempt).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(attempt).rejects.toThrow(path);
    await expect(attempt).rejects.toThrow(/ENOTDIR/);
    // The path itself being a file is refused too.
    await expect(open(file)).rejects.toMatchObject({ code: 'store_unavailable', message: expect.stringContaining(file) });
  });

  it.skipIf(process.platform !== 'linux')('stops with a clear error, not a hang, where the kernel refuses the folder (under /proc)', async () => {
    // Node's recursive mkdir loops forever here (ENOENT although the parent exists); the store creates levels itself.
    const path = `/proc/flint-kv-file-test-${process.pid}/state`;
    const attempt = open(path);
    await expect(attempt).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(attempt).rejects.toThrow(`cannot create state directory ${path}`);
  });

  it('stops with a clear error when the folder cannot be written, or created under a read-only folder', async () => {
    // Root ignores folder permissions: then the child process drops to user nobody (65534) once the
    // engine is loaded (the checkout itself may sit in a folder nobody cannot read).
    const readOnly = newDir();
    await mkdir(readOnly);
    await chmod(readOnly, 0o555);
    if (isRoot) await chmod(temp.path, 0o755);
    const below = join(readOnly, 'state');
    const attempt = spawnNode(tryOpenScript, isRoot ? ['--as-uid', '65534', readOnly, below] : [readOnly, below]);
    await attempt.exited;
    const results = attempt.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { path: string; ok: boolean; code?: string; message?: string });
    expect(results, attempt.stderr()).toHaveLength(2);
    for (const result of results) {
      expect(result).toMatchObject({ ok: false, code: 'store_unavailable' });
      expect(result.message).toContain(result.path);
      expect(result.message).toMatch(/EACCES|EPERM/);
    }
  });
});

describe('file_based: damaged snapshot', () => {
  it('refuses to open when the snapshot was cut short, naming the file (never a silent partial state)', async () => {
    const dir = newDir();
    const store = await open(dir, { compactAfterBytes: 256 });
    for (let i = 0; i < 50; i++) await store.set('s', `k${i}`, { i, pad: 'x'.repeat(20) });
    await store.close();
    const path = join(dir, 'snapshot.jsonl');
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.length).toBeGreaterThan(3);
    await writeFile(path, `${lines.slice(0, -2).join('\n')}\n`); // without its trailer line
    await expect(open(dir)).rejects.toMatchObject({ code: 'store_unavailable', message: expect.stringContaining(`state snapshot ${path} is damaged`) });
    // The failed open released the folder.
    expect(existsSync(join(dir, 'LOCK'))).toBe(false);
  });
});

describe('file_based: compaction and group commit', () => {
  it('compacts into a snapshot, deletes old logs and keeps every write made meanwhile', async () => {
    const dir = newDir();
    const store = await open(dir, { compactAfterBytes: 4096 });
    const expected = new Map<string, unknown>();
    let next = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < 4000) {
          const i = next++;
          const key = `k${i % 300}`;
          if (i % 7 === 3) {
            expected.delete(key);
            await store.delete('c', key);
          } else if (i % 7 === 5) {
            const r = await store.update('c', key, (current) => ({ value: { i, prev: current.exists }, extra: null }));
            expected.set(key, r.new_value);
          } else {
            expected.set(key, { i, pad: 'p'.repeat(i % 50) });
            await store.set('c', key, { i, pad: 'p'.repeat(i % 50) });
          }
        }
      }),
    );
    const stats = (store as unknown as { stats?: { compactions: number } }).stats;
    expect(stats?.compactions ?? 1).toBeGreaterThan(0);
    // The last compaction may still be writing: wait until one snapshot and one (the current) log remain.
    await waitFor(
      async () => {
        const names = await readdir(dir);
        if (!names.includes('snapshot.jsonl') || names.includes('snapshot.jsonl.tmp')) return false;
        const logs = names.filter((n) => n.startsWith('log-'));
        if (logs.length !== 1) return false;
        const header = JSON.parse((await readFile(join(dir, 'snapshot.jsonl'), 'utf8')).split('\n')[0]!.slice(9)) as { generation: number };
        return logs[0] === `log-${String(header.generation).padStart(8, '0')}.jsonl`;
      },
      5000,
      'the last compaction to finish',
    );
    const snapshot = (await readFile(join(dir, 'snapshot.jsonl'), 'utf8')).split('\n');
    expect(snapshot[0]).toMatch(/^[0-9a-f]{8} \{"o":"h","format":1,"generation":\d+,"entries":\d+\}$/);

    const sorted = (values: unknown[]) => values.map((v) => JSON.stringify(v)).sort();
    const again = await reopen(store, dir, { compactAfterBytes: 4096 });
    expect(sorted(await again.list('c'))).toEqual(sorted([...expected.values()]));
    for (const [key, value] of expected) expect(await again.get('c', key)).toEqual({ exists: true, value });
  });

  it('measures write throughput with 64 calls in flight (group commit)', async () => {
    const dir = newDir();
    const store = await open(dir);
    const total = 10_000;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < total) {
          const i = next++;
          await store.set('bench', `k${i}`, { i, payload: 'x'.repeat(64) });
        }
      }),
    );
    const ms = performance.now() - started;
    const stats = (store as unknown as { stats?: { flushes: number; records: number } }).stats;
    const perFsync = stats ? (stats.records / stats.flushes).toFixed(1) : '?';
    console.log(
      `[kv/file.test] ${total} sets, 64 in flight: ${ms.toFixed(0)} ms, ${Math.round((total / ms) * 1000)} sets/s, ${stats?.flushes ?? '?'} fsyncs (${perFsync} records per fsync)`,
    );
    if (stats) expect(stats.flushes).toBeLessThan(total / 4); // batched, not one fsync per write
    const again = await reopen(store, dir);
    expect((await again.list('bench')).length).toBe(total);
  });
});
