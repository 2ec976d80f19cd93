import { StoredDelivery, deliveredBody } from './body.js';
import type { Batch, Leased } from './consumer.js';

/**
 * The packed texts of the hot scripts (PUBLISH_MANY, SETTLE and every fetch segment, see scripts.ts): a
 * message's fields travel as one or two strings rather than five to twelve. Each argument and each reply
 * element costs the engine's Redis client a fixed amount (building the command, measuring and writing
 * each argument, decoding each element of the reply), and that was about a fifth of the engine's time per
 * message through this adapter (bench/queue). Free text (a group, an error, a signature) is always the
 * last field, so it needs no escaping: the script takes the rest of the string.
 */

export type Reply = (string | number)[];

/**
 * The names one PUBLISH_MANY call refers to by index (1 on), sent once at the start of its arguments:
 * topic keys and queue bases, which are the same for most messages of a call. `''` is 0 and not sent.
 */
export class ScriptNames {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();

  of(name: string): number {
    if (name === '') return 0;
    let at = this.index.get(name);
    if (at === undefined) {
      this.list.push(name);
      at = this.list.length;
      this.index.set(name, at);
    }
    return at;
  }
}

/** A publish's head: `delay ms,count,holders,options,signature` (holders and options: indexes of names). */
export function publishHead(delay: number, count: number, holders: number, options: number, signature: string): string {
  return `${delay},${count},${holders},${options},${signature}`;
}

/** One queue's copy of a publish: `base,n,lease ms,id`, then `,group` when it has one. */
export function copyHead(base: number, n: number, leaseMs: number, id: string, group: string | undefined): string {
  const head = `${base},${n},${leaseMs},${id}`;
  return group === undefined ? head : `${head},${group}`;
}

/** One settle: `id,token,kind,delay ms,error`. */
export function settleArg(id: string, token: string, kind: string, delay: number, error: string): string {
  return `${id},${token},${kind},${delay},${error}`;
}

/**
 * A fetch segment at `at`: ms until the next due time (or -1), the count, then per message its head
 * `id,attempt,token[,group]` and its body. Returns the batch and where the next segment starts.
 */
export function parseBatch(reply: Reply, at: number): { batch: Batch; next: number } {
  const nextDueMs = Number(reply[at]);
  const count = Number(reply[at + 1]);
  const messages: Leased[] = [];
  let i = at + 2;
  for (let k = 0; k < count; k++, i += 2) {
    const head = String(reply[i]);
    const a = head.indexOf(',');
    const b = head.indexOf(',', a + 1);
    const c = head.indexOf(',', b + 1);
    const id = head.slice(0, a);
    const attempt = Number(head.slice(a + 1, b));
    const group = c < 0 ? undefined : head.slice(c + 1);
    const { head: body, dataJson } = deliveredBody(String(reply[i + 1]));
    messages.push({
      token: c < 0 ? head.slice(b + 1) : head.slice(b + 1, c),
      delivery:
        dataJson === undefined
          ? { id, data: body.d, attempt, publishedAt: body.t, group, traceparent: body.tp, baggage: body.bg, functionId: body.f }
          : new StoredDelivery(id, dataJson, attempt, body.t, group, body.tp, body.bg, body.f),
    });
  }
  return { batch: { messages, nextDueMs }, next: i };
}
