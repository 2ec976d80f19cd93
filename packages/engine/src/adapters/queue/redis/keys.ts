/**
 * Where the redis queue adapter keeps things, under `prefix`:
 *
 * - `${prefix}:q:${name}:…` the keys of one queue (see scripts.ts for each suffix); `name` is the queue's
 *   name with `%` and `:` percent-encoded, so no name's keys can run into another's.
 * - `${prefix}:t:${topic}:holders` (sorted set `instance:queue` → hold expiry) and `…:opts` (hash queue →
 *   BindOptions JSON): a topic's bindings.
 * - `${prefix}:topics` and `${prefix}:deadq`: the topics with bindings and the queues with dead letters
 *   (encoded names), so listing them never scans the key space.
 */

/** `%` and `:` percent-encoded: keeps `:` a separator in keys. */
export function encodeName(name: string): string {
  // Most names have neither: they are the key part as they are (a publish encodes its topic and queue).
  return NEEDS_ENCODING.test(name) ? name.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A')) : name;
}

const NEEDS_ENCODING = /[%:]/;

export function decodeName(encoded: string): string {
  return encoded.replace(/%(25|3A)/g, (_, hex: string) => (hex === '25' ? '%' : ':'));
}

/** Keys kept at most per kind by a QueueKeys (the queues and topics of an engine are its bindings and named queues). */
const MAX_KEPT_KEYS = 10_000;

/** `make(name)`, kept in `kept` per name: asked for on every publish, fetch and settle. */
function keptFor<T>(kept: Map<string, T>, name: string, make: (name: string) => T): T {
  let value = kept.get(name);
  if (value === undefined) {
    if (kept.size >= MAX_KEPT_KEYS) kept.clear();
    value = make(name);
    kept.set(name, value);
  }
  return value;
}

export class QueueKeys {
  readonly topics: string;
  readonly deadQueues: string;
  private readonly queueKeys = new Map<string, string>();
  private readonly topicKeys = new Map<string, TopicKeys>();

  constructor(readonly prefix: string) {
    this.topics = `${prefix}:topics`;
    this.deadQueues = `${prefix}:deadq`;
  }

  /** The common start of a queue's keys; scripts append `:wait`, `:lease`, … and `:wake` is its notification channel. */
  queue(name: string): string {
    return keptFor(this.queueKeys, name, this.makeQueueKey);
  }

  wakeChannel(name: string): string {
    return `${this.queue(name)}:wake`;
  }

  /** A topic's holders and bind options keys (see above). */
  topic(name: string): TopicKeys {
    return keptFor(this.topicKeys, name, this.makeTopicKeys);
  }

  private readonly makeQueueKey = (name: string): string => `${this.prefix}:q:${encodeName(name)}`;

  private readonly makeTopicKeys = (name: string): TopicKeys => {
    const base = `${this.prefix}:t:${encodeName(name)}`;
    return { holders: `${base}:holders`, options: `${base}:opts` };
  };
}

export interface TopicKeys {
  holders: string;
  options: string;
}
