/** The Streams page's URL search params (every selection is a deep link: `/streams?stream=chat&group=room-1`). */

export type FrameDirection = 'in' | 'out';

export interface StreamsSearch {
  /** The stream shown (and inspected once a group is chosen). */
  stream?: string;
  /** The group the inspector joins. */
  group?: string;
  /** Show only inbound (from the engine) or outbound (sent by the page) frames; both when absent. */
  dir?: FrameDirection;
  /** Filters the stream list by name. */
  q?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** Keeps the params the page knows, each checked. */
export function validateStreamsSearch(s: Record<string, unknown>): StreamsSearch {
  const out: StreamsSearch = {};
  const stream = str(s.stream);
  if (stream) out.stream = stream;
  const group = str(s.group);
  if (group) out.group = group;
  if (s.dir === 'in' || s.dir === 'out') out.dir = s.dir;
  const q = str(s.q);
  if (q) out.q = q;
  return out;
}
