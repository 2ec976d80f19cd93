// Redis helpers the benches share: a client that fails fast when Redis is not there, and the CPU time of
// a local redis-server read from /proc.
import { readFile } from 'node:fs/promises';
import { Redis } from 'ioredis';

/** `url` with any password replaced by `***`. */
export const redactUrl = (url) => url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');

/** A connected client (`{redis}`), or `{reason}` when Redis at `url` is not reachable. */
export async function openRedis(url) {
  const r = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  let lastError;
  r.on('error', (err) => {
    lastError = err;
  });
  try {
    await r.connect();
    await r.ping();
    return { redis: r };
  } catch (err) {
    r.disconnect();
    const cause = lastError ?? err;
    return { reason: `Redis at ${redactUrl(url)} is not reachable (${cause instanceof Error ? cause.message : String(cause)})` };
  }
}

/** Deletes every key under `prefix` (glob characters in it taken literally). */
export async function deleteKeysUnder(redis, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\^]/g, '\\$&')}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** CPU ms so far of a process this one can see in /proc (Linux; clock ticks assumed to be 10 ms); NaN when it cannot. */
export async function procCpuMs(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime
  } catch {
    return Number.NaN;
  }
}

/** The pid of the redis-server `redis` talks to, when it runs on this machine; else undefined. */
export async function redisServerPid(redis) {
  try {
    const pid = /process_id:(\d+)/.exec(await redis.info('server'))?.[1];
    return pid && (await readFile(`/proc/${pid}/comm`, 'utf8')).startsWith('redis') ? pid : undefined;
  } catch {
    return undefined;
  }
}
