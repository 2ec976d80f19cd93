import { useEffect, useState } from 'react';

/** "just now", "42 s ago", "3 min ago", "2 h ago", "5 d ago" (a time in the future reads "in …"). */
export function relativeTime(ms: number, now = Date.now()): string {
  const diff = now - ms;
  const abs = Math.abs(diff);
  const s = Math.round(abs / 1000);
  let text: string;
  if (s < 5) return 'just now';
  if (s < 60) text = `${s} s`;
  else if (s < 3600) text = `${Math.floor(s / 60)} min`;
  else if (s < 86_400) text = `${Math.floor(s / 3600)} h`;
  else text = `${Math.floor(s / 86_400)} d`;
  return diff >= 0 ? `${text} ago` : `in ${text}`;
}

/** A full local date and time, for a `title` next to a relative time. */
export function absoluteTime(ms: number): string {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toLocaleString();
}

/** A time of day with seconds (for lists of recent events). */
export function timeOfDay(ms: number): string {
  return new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "12 ms", "1.4 s". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** "512 B", "12.3 KiB", "48.0 MiB". */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** The first 8 characters of an id (workers have UUIDs). */
export const shortId = (id: string) => id.slice(0, 8);

/** The current time, refreshed every `intervalMs`, so relative times stay true. */
export function useNow(intervalMs = 15_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

/** Case-insensitive substring match of `query` in any of `fields`. */
export function matches(query: string, ...fields: (string | null | undefined)[]): boolean {
  const q = query.trim().toLowerCase();
  if (q === '') return true;
  return fields.some((f) => f?.toLowerCase().includes(q));
}
