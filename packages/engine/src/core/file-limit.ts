import { readFileSync } from 'node:fs';
import type { Logger } from './logger.js';

/** A listener's connection cap and the setting that chose it. */
export interface CapSetting {
  setting: string;
  maxConnections: number;
}

/** Descriptors kept for everything but connections: stdio, store files, Redis, child processes. */
const SPARE_DESCRIPTORS = 100;

/**
 * The soft limit on this process's open files, from /proc/self/limits (Linux; Node raises it to the
 * hard limit at start-up). Undefined where it cannot be read.
 */
export function openFileLimit(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  if (soft === undefined) return undefined;
  return soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft);
}

/**
 * Warns when the listeners' connection caps, with a few descriptors to spare, add up to more than
 * the process may open: past that limit every new connection fails (workers reconnecting included),
 * whatever the caps say.
 */
export function warnIfCapsExceedFileLimit(caps: CapSetting[], logger: Logger, limit = openFileLimit()): void {
  if (limit === undefined) return;
  const total = caps.reduce((sum, cap) => sum + cap.maxConnections, 0);
  if (total + SPARE_DESCRIPTORS <= limit) return;
  const list = caps.map((cap) => `${cap.setting} ${cap.maxConnections}`).join(', ');
  logger.warn(
    { open_file_limit: limit, connection_caps: total },
    `the connection caps add up to ${total} (${list}) but this process may open only ${limit} files: past that, every new connection fails, workers reconnecting included. Raise the limit (ulimit -n) or lower the caps`,
  );
}
