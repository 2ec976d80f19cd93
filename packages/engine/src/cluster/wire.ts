import type { ErrorBody, TriggerInfo, TriggerTypeInfo, WorkerInfo } from '@flint/protocol';
import type { FunctionDefinition } from '../core/api/functions.js';
import type { RemoteWorkerRef } from '../core/functions.js';
import type { CallerIdentity } from '../core/invoker.js';

/** What an engine tells the others: what its own workers provide. */
export interface NodeSnapshot {
  node: string;
  /** Changes whenever the content does; heartbeats carry it so that a peer notices what it missed. */
  seq: number;
  started_at: number;
  version: string;
  /** The engine's first bridge listener, for people reading `flint cluster`. */
  bridge: string;
  functions: (FunctionDefinition & { workers: RemoteWorkerRef[] })[];
  workers: WorkerInfo[];
  triggers: TriggerInfo[];
  /** Trigger types its workers provide: triggers of these types registered on other engines are forwarded to it. */
  trigger_types: TriggerTypeInfo[];
}

/** A heartbeat (and, with `hello`, an engine joining): its node id and snapshot version. */
export interface Heartbeat {
  node: string;
  /** Random per engine process: two engines with one node_id tell each other apart by it. */
  instance: string;
  seq: number;
  hello?: boolean;
  /** The engine is leaving (a graceful stop): drop it at once. */
  leave?: boolean;
}

/** A call forwarded to another engine. */
export interface RemoteCall {
  function_id: string;
  data: unknown;
  traceparent?: string;
  baggage?: string;
  timeout_ms: number;
  /** Who made the call, when its listener's auth function gave it a context (handed on as `ctx.caller`). */
  caller?: CallerIdentity;
}

export type RemoteAnswer = { result: unknown } | { error: ErrorBody };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encode = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));

/** The parsed JSON of a message, or undefined when it is not JSON (a stray publisher on our subjects). */
export function decode<T>(data: Uint8Array): T | undefined {
  try {
    return JSON.parse(decoder.decode(data)) as T;
  } catch {
    return undefined;
  }
}

export type Subjects = ReturnType<typeof subjects>;

/** The subjects of cluster `name`. */
export function subjects(name: string) {
  return {
    heartbeat: `flint.${name}.heartbeat`,
    snapshot: (node: string) => `flint.${name}.node.${node}.snapshot`,
    invoke: (node: string) => `flint.${name}.node.${node}.invoke`,
    ping: (node: string) => `flint.${name}.node.${node}.ping`,
    triggers: (node: string) => `flint.${name}.node.${node}.triggers`,
    /** Every engine listens: the one holding the channel answers. */
    channelOpen: `flint.${name}.channels.open`,
    channelRelay: (node: string, relay: string) => `flint.${name}.node.${node}.channel.${relay}`,
  };
}
