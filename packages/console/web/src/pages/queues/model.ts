import type { QueueStats } from '../../../../src/api-types.js';

/** A queue's rates as short `name n/s` parts (published, handled, failed, dead per second). */
export function rateParts(rates: QueueStats['rates'] | undefined): { name: string; text: string; value: number }[] {
  if (!rates) return [];
  return Object.entries(rates)
    .filter(([, v]) => typeof v === 'number' && Number.isFinite(v))
    .map(([k, v]) => ({
      name: k.replace(/_per_sec(ond)?$|_per_s$|_rate$/, '').replace(/_/g, ' '),
      value: v,
      text: `${v === 0 ? '0' : v < 10 ? v.toFixed(1) : Math.round(v).toString()}/s`,
    }));
}

/** A kind in words. */
export const kindLabel = (kind: QueueStats['kind']) => (kind === 'topic' ? 'topic' : 'function queue');

/** A failure time (ms or s since the epoch) as local time. */
export function failedAt(t: number): string {
  if (!Number.isFinite(t) || t <= 0) return '—';
  return new Date(t < 1e11 ? t * 1000 : t).toLocaleString();
}

/** `1 message` / `3 messages`. */
export const messages = (n: number) => `${n} message${n === 1 ? '' : 's'}`;
