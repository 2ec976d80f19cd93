/**
 * The `builtin` queue with `store_method: file_based`, beyond the contract suite: every acknowledged
 * publish survives `kill -9` of the process (a child that opens the adapter without an engine,
 * support/queue/writer.mjs), a torn last record is skipped with one warning, the folder is locked
 * against a second opener, in-flight / delayed / FIFO / dead messages come back as they were,
 * compaction keeps everything, and the time from restart to first delivery with 100,000 messages is
 * reported. Everything goes through the public `openAdapter`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Delivery, type Logger, type QueueBackend, type Settlement, openAdapter } from '@flint/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { captureLog } from '../support/log-capture.js';
import { tempRoot } from '../support/temp-root.js';
import { rejectsWith, waitFor } from '../support/util.js';

const supportScript = (name: string) => fileURLToPath(new URL(`../support/queue/${name}`, import.meta.url));
const OPTS = { concurrency: 10, fifo: false, visibilityTimeoutMs: 30_000 };

const temp = tempRoot('flint-queue-file-test-');
const queues: QueueBackend[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const q of queues.splice(0)) await q.close().catch(() => {});
});

function newDir(): string {
  return temp.newDir('queues');
}

async function open(
  dir: string,
  { compactAfterBytes = undefined as number | undefined, logger = undefined as Logger | undefined } = {},
): Promise<QueueBackend> {
  const config: Record<string, unknown> = { store_method: 'file_based', file_path: dir };
  if (compactAfterBytes !== undefined) config.compact_after_bytes = compactAfterBytes;
  const q = await openAdapter('queue', { name: 'builtin', config }, logger ? { configDir: temp.path, logger } : { configDir: temp.path });
  queues.push(q);
  return q;
}

async function reopen(q: QueueBackend, dir: string, options: { compactAfterBytes?: number; logger?: Logger } = {}): Promise<QueueBackend> {
  await q.close();
  return open(dir, options);
}

/** Opens `dir` with a logger that collects the warnings. */
async function openCollectingWarnings(dir: string): Promise<{ queue: QueueBackend; warnings: string[] }> {
  const log = captureLog('warn');
  const queue = await open(dir, { logger: log.logger });
  await new Promise((resolve) => setImmediate(resolve)); // the capture parses lines as its stream delivers them
  return { queue, warnings: log.records.map((r) => String(r.msg)) };
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
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() as string;
    lines.push(...parts);
  });
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, lines, exited, stderr: () => stderr };
}

/** Collects deliveries without settling them. */
function collector(): { all: { delivery: Delivery; settle: (s: Settlement) => void }[]; handler: (d: Delivery, s: (s: Settlement) => void) => void } {
  const all: { delivery: Delivery; settle: (s: Settlement) => void }[] = [];
  return { all, handler: (delivery, settle) => all.push({ delivery, settle }) };
}

async function logFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => /^log-\d+\.dat$/.test(name)).sort();
}

describe('file_based queue: crash safety', () => {
  it('keeps every acknowledged publish across kill -9 mid-burst; a torn last record is skipped with one warning', async () => {
    const dir = newDir();
    const writer = spawnNode(supportScript('writer.mjs'), [dir, '5000']);
    await waitFor(
      () => {
        if (writer.child.exitCode !== null) throw new Error(`writer exited early (${writer.child.exitCode}): ${writer.stderr()}`);
        return writer.lines.length >= 300;
      },
      20_000,
      '300 acknowledged publishes',
    );
    writer.child.kill('SIGKILL');
    await writer.exited;
    expect(writer.child.signalCode).toBe('SIGKILL');
    const acked = new Map<string, number>();
    for (const line of writer.lines) {
      const [index, id] = line.split(' ');
      if (id) acked.set(id, Number(index));
    }
    expect(acked.size).toBeGreaterThanOrEqual(300);
    expect(writer.lines).not.toContain('done'); // killed mid-burst, not after

    // A write cut short by the crash: a frame header promising more bytes than follow.
    const [last] = (await logFiles(dir)).slice(-1);
    const torn = Buffer.alloc(20, 0x61);
    torn.writeUInt32LE(4096, 0);
    await appendFile(join(dir, last as string), torn);

    const { queue, warnings } = await openCollectingWarnings(dir);
    expect(warnings.filter((w) => w.includes('incomplete or damaged last record'))).toHaveLength(1);
    expect(warnings).toHaveLength(1);
    const stats = await queue.stats('crash');
    expect(stats.waiting).toBeGreaterThanOrEqual(acked.size);
    expect(stats.waiting).toBeLessThanOrEqual(5000);
    const waiting = await queue.peek('crash', 0, 10_000);
    const found = new Map(waiting.map((m) => [m.id, (m.data as { i: number }).i]));
    expect(found.size).toBe(waiting.length); // no duplicates
    for (const [id, index] of acked) expect(found.get(id), `acknowledged message ${index} (${id})`).toBe(index);

    // The log is clean again: a new publish survives another reopen without warnings.
    const { id } = await queue.publish('crash', { data: 'after' });
    await queue.close();
    const again = await openCollectingWarnings(dir);
    expect(again.warnings).toEqual([]);
    expect((await again.queue.peek('crash', 0, 10_000)).find((m) => m.id === id)?.data).toBe('after');
  });

  it('refuses a second open of the same folder while the first holds it (same process, another process)', async () => {
    const dir = newDir();
    const first = await open(dir);
    const refused = await rejectsWith(open(dir), 'queue_unavailable');
    expect(refused.message).toContain(`queue directory ${dir} is locked by process ${process.pid}`);
    await first.close();
    await (await open(dir)).close();

    const holder = spawnNode(supportScript('holder.mjs'), [dir]);
    const ready = await waitFor(
      () => holder.lines.find((l) => l.startsWith('ready ')),
      10_000,
      () => `the holder (${holder.stderr()})`,
    );
    const pid = Number(ready.split(' ')[1]);
    const other = await rejectsWith(open(dir), 'queue_unavailable');
    expect(other.message).toContain(`is locked by process ${pid}`);
    holder.child.kill('SIGKILL');
    await holder.exited;
    // Its lock is stale now: taken over, and what it published is there.
    const after = await open(dir);
    expect((await after.peek('holder', 0, 10)).map((m) => m.data)).toEqual([pid]);
  });
});

describe('file_based queue: recovery', () => {
  it('brings back in-flight messages as waiting with their attempt kept, delayed ones delayed, FIFO order and dead letters', async () => {
    const dir = newDir();
    let q = await open(dir);
    for (const i of [0, 1, 2]) await q.publish('jobs', { data: `a${i}`, group: 'a' });
    await q.publish('jobs', { data: 'p0' });
    await q.publish('jobs', { data: 'later', delayMs: 60_000 });
    await q.publish('jobs', { data: 'p1' });
    await q.publish('dead', { data: { why: 'kept' }, functionId: 'f' });
    const doomed = collector();
    q.consume('dead', OPTS, doomed.handler);
    await waitFor(() => doomed.all.length === 1);
    doomed.all[0]?.settle({ type: 'dead', error: 'boom' });
    const hung = collector();
    q.consume('jobs', { ...OPTS, fifo: true }, hung.handler);
    await waitFor(() => hung.all.length === 3, 2000, 'three deliveries (a0, p0, p1)');
    expect(hung.all.map((r) => r.delivery.data).sort()).toEqual(['a0', 'p0', 'p1']);
    expect(await q.stats('jobs')).toEqual({ waiting: 2, inFlight: 3, delayed: 1, dead: 0 });

    q = await reopen(q, dir);
    expect(await q.stats('jobs')).toEqual({ waiting: 5, inFlight: 0, delayed: 1, dead: 0 });
    expect((await q.peek('jobs', 0, 10)).map((m) => m.data)).toEqual(['a0', 'a1', 'a2', 'p0', 'p1']);
    const dead = await q.deadLetters('dead', 0, 10);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({ data: { why: 'kept' }, error: 'boom', attempts: 1, functionId: 'f' });

    const again = collector();
    q.consume('jobs', { ...OPTS, fifo: true }, again.handler);
    await waitFor(() => again.all.length === 3, 2000, 'three deliveries after the reopen');
    const byData = new Map(again.all.map((r) => [r.delivery.data, r]));
    for (const data of ['a0', 'p0', 'p1']) expect(byData.get(data)?.delivery.attempt, `${data} was delivered once before`).toBe(2);
    // a1 waits for a0 (FIFO), then comes as its first attempt.
    byData.get('a0')?.settle({ type: 'ack' });
    await waitFor(() => again.all.length === 4);
    expect(again.all[3]?.delivery).toMatchObject({ data: 'a1', attempt: 1 });
    expect((await q.stats('jobs')).delayed).toBe(1);
  });

  it('a retried FIFO head still holds its group after a restart', async () => {
    const dir = newDir();
    let q = await open(dir);
    await q.publish('fifo', { data: 0, group: 'g' });
    await q.publish('fifo', { data: 1, group: 'g' });
    const first = collector();
    q.consume('fifo', { ...OPTS, fifo: true }, first.handler);
    await waitFor(() => first.all.length === 1);
    first.all[0]?.settle({ type: 'retry', delayMs: 400, error: 'not yet' });
    q = await reopen(q, dir);
    expect(await q.stats('fifo')).toEqual({ waiting: 1, inFlight: 0, delayed: 1, dead: 0 });
    const after = collector();
    q.consume('fifo', { ...OPTS, fifo: true }, after.handler);
    await waitFor(() => after.all.length === 1, 3000, 'the retried head');
    expect(after.all[0]?.delivery).toMatchObject({ data: 0, attempt: 2 });
  });

  it('compacts the log into a snapshot and reads messages back from it; folder 0700, files 0600', async () => {
    const dir = newDir();
    let q = await open(dir, { compactAfterBytes: 64 * 1024 });
    const pad = 'y'.repeat(300);
    for (let i = 0; i < 2000; i += 100) await Promise.all(Array.from({ length: 100 }, (_, k) => q.publish('big', { data: { i: i + k, pad } })));
    // Ack the even ones, kill some odd ones, leave the rest in flight.
    const done = collector();
    q.consume('big', { ...OPTS, concurrency: 2000 }, (d, settle) => {
      const i = (d.data as { i: number }).i;
      done.all.push({ delivery: d, settle });
      if (i % 2 === 0) settle({ type: 'ack' });
      else if (i % 10 === 1) settle({ type: 'dead', error: `dead ${i}` });
    });
    await waitFor(() => done.all.length === 2000, 10_000, '2000 deliveries');
    q = await reopen(q, dir, { compactAfterBytes: 64 * 1024 });
    const names = await readdir(dir);
    expect(names).toContain('snapshot.dat');
    expect((await logFiles(dir)).length).toBeLessThanOrEqual(2);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(names).toContain('LOCK');
    for (const name of names) expect((await stat(join(dir, name))).mode & 0o777, name).toBe(0o600);

    const stats = await q.stats('big');
    expect(stats.dead).toBe(200);
    expect(stats.waiting).toBe(800);
    const dead = await q.deadLetters('big', 0, 1000);
    expect(dead.every((d) => (d.data as { i: number }).i % 10 === 1 && d.error === `dead ${(d.data as { i: number }).i}`)).toBe(true);
    const rest = collector();
    q.consume('big', { ...OPTS, concurrency: 1000 }, rest.handler);
    await waitFor(() => rest.all.length === 800, 10_000, '800 deliveries');
    const seen = rest.all.map((r) => (r.delivery.data as { i: number; pad: string }).i);
    expect(seen.every((i) => i % 2 === 1 && i % 10 !== 1)).toBe(true);
    expect(new Set(seen).size).toBe(800);
    expect(rest.all.every((r) => (r.delivery.data as { pad: string }).pad === pad)).toBe(true);
  });

  it('restart with 100,000 small messages: reports the time from opening to the first delivery', async () => {
    const dir = newDir();
    let q = await open(dir);
    const total = 100_000;
    for (let i = 0; i < total; i += 1000) await Promise.all(Array.from({ length: 1000 }, (_, k) => q.publish('many', { data: { n: i + k } })));
    await q.close();
    const started = performance.now();
    q = await open(dir);
    const opened = performance.now();
    const first = await new Promise<Delivery>((resolve) => q.consume('many', OPTS, (d) => resolve(d)));
    const delivered = performance.now();
    console.log(
      `file_based queue restart with ${total} waiting messages: opened in ${(opened - started).toFixed(0)} ms, first delivery after ${(delivered - started).toFixed(0)} ms`,
    );
    expect(first.data).toEqual({ n: 0 });
    expect((await q.stats('many')).waiting + 10).toBeGreaterThanOrEqual(total);
  });
});
