import { FlintError, type TriggerRegistrationResultMessage } from '@flint/protocol';
import type { TriggerTypeProvider } from '../api/triggers.js';
import type { TriggerAck, WorkerConnection } from './connection.js';

/**
 * Trigger types a worker provides: the engine forwards each trigger of such a type to that worker
 * (`registertrigger`) and waits for its `triggerregistrationresult`, answers coming in order per id.
 * Workers that never answer (older SDKs) are taken as having accepted after `ackTimeoutMs`.
 */
export function workerTypeProvider(conn: WorkerConnection, ackTimeoutMs: number): TriggerTypeProvider {
  return {
    registerTrigger: (t) =>
      new Promise<void>((resolve, reject) => {
        const queue = conn.triggerAcks.get(t.id) ?? [];
        conn.triggerAcks.set(t.id, queue);
        const ack: TriggerAck = {
          resolve,
          reject,
          timer: setTimeout(() => {
            const i = queue.indexOf(ack);
            if (i >= 0) queue.splice(i, 1);
            if (queue.length === 0 && conn.triggerAcks.get(t.id) === queue) conn.triggerAcks.delete(t.id);
            resolve();
          }, ackTimeoutMs),
        };
        queue.push(ack);
        conn.send({ type: 'registertrigger', id: t.id, trigger_type: t.type, function_id: t.function_id, config: t.config, metadata: t.metadata });
      }),
    unregisterTrigger: (t) => conn.send({ type: 'unregistertrigger', id: t.id, trigger_type: t.type }),
  };
}

/** A worker's answer to a forwarded trigger. */
export function answerForwardedTrigger(conn: WorkerConnection, msg: TriggerRegistrationResultMessage): void {
  const queue = conn.triggerAcks.get(msg.id);
  const ack = queue?.shift();
  if (!ack) return;
  if (queue?.length === 0) conn.triggerAcks.delete(msg.id);
  clearTimeout(ack.timer);
  if (msg.error) ack.reject(new FlintError(msg.error.code || 'trigger_registration_failed', msg.error.message ?? 'rejected by the provider'));
  else ack.resolve();
}

/** Fails every forwarded trigger still awaiting a disconnecting worker's answer. */
export function failForwardedTriggers(conn: WorkerConnection): void {
  for (const ack of [...conn.triggerAcks.values()].flat()) {
    clearTimeout(ack.timer);
    ack.reject(new FlintError('trigger_registration_failed', 'the worker providing this trigger type disconnected'));
  }
  conn.triggerAcks.clear();
}
