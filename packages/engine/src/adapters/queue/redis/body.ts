import type { Delivery, NewMessage } from '../types.js';

/** A message's stored JSON: everything but its id, attempts and group, which live beside it (scripts.ts). */
export interface Body {
  d: unknown;
  t: number;
  tp?: string;
  bg?: string;
  f?: string;
}

/**
 * A message's stored JSON, `{t, tp?, bg?, f?, d}`: the data last, so that a delivery takes its text as it is
 * (see `deliveredBody`). Records stored before had `d` first; both are read.
 */
export function encodeBody(message: NewMessage): string {
  let text = `{"t":${Date.now()}`;
  if (message.traceparent !== undefined) text += `,"tp":${JSON.stringify(message.traceparent)}`;
  if (message.baggage !== undefined) text += `,"bg":${JSON.stringify(message.baggage)}`;
  if (message.functionId !== undefined) text += `,"f":${JSON.stringify(message.functionId)}`;
  return `${text},"d":${JSON.stringify(message.data ?? null)}}`;
}

/** Where the data starts in a body that has it last: after the first `,"d":` (no string of the head can hold one unescaped). */
const DATA_KEY = ',"d":';

/**
 * A body for delivery, its data kept as the JSON text it was stored as (`dataJson`: the call's frame takes
 * it as it is, no parse and stringify of every message on the way through); a record of the older layout
 * (data first) is parsed whole. The data text is not checked: records are only written by encodeBody. One
 * damaged in Redis by hand would reach the worker as a frame its SDK drops, then be retried and dead-lettered.
 */
export function deliveredBody(text: string): { head: Body; dataJson?: string } {
  if (text.startsWith('{"t":')) {
    const at = text.indexOf(DATA_KEY);
    if (at > 0 && text.endsWith('}')) {
      try {
        return { head: JSON.parse(`${text.slice(0, at)}}`) as Body, dataJson: text.slice(at + DATA_KEY.length, -1) };
      } catch {
        // Falls through to the whole record.
      }
    }
  }
  return { head: decodeBody(text) };
}

/** A delivery whose data is parsed from its JSON text only when read. */
export class StoredDelivery implements Delivery {
  private parsed = false;
  private value: unknown = undefined;

  constructor(
    readonly id: string,
    readonly dataJson: string,
    readonly attempt: number,
    readonly publishedAt: number,
    readonly group: string | undefined,
    readonly traceparent: string | undefined,
    readonly baggage: string | undefined,
    readonly functionId: string | undefined,
  ) {}

  get data(): unknown {
    if (!this.parsed) {
      this.parsed = true;
      try {
        this.value = JSON.parse(this.dataJson);
      } catch {
        // A damaged record is delivered as null rather than blocking its queue.
        this.value = null;
      }
    }
    return this.value;
  }
}

export function decodeBody(text: string): Body {
  try {
    const body = JSON.parse(text) as Body | null;
    if (body && typeof body === 'object') return body;
  } catch {
    // Falls through: a damaged record is delivered as null rather than blocking its queue.
  }
  return { d: null, t: 0 };
}
