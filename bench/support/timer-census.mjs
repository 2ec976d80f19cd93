// Counts the live timers (setTimeout / setInterval) of the calling process, ref'd or not, by asking the
// V8 inspector for every object whose prototype is Node's Timeout (Runtime.queryObjects, which collects
// garbage first) and keeping those not yet fired or cleared. For bench/cron: an engine that keeps one
// timer for all its cron triggers adds one live timer when 10,000 triggers are registered, not 10,000.
//   { live, byCallback: { '<callback name> timeout|interval': count, … } }
import { Session } from 'node:inspector/promises';

const probe = setTimeout(() => {}, 1);
const timeoutPrototype = Object.getPrototypeOf(probe);
clearTimeout(probe);
const GROUP = 'bench-timer-census';

export async function timerCensus() {
  const session = new Session();
  session.connect();
  const key = `__benchTimeoutPrototype${process.pid}`;
  globalThis[key] = timeoutPrototype;
  try {
    const proto = await session.post('Runtime.evaluate', { expression: `globalThis[${JSON.stringify(key)}]`, objectGroup: GROUP });
    const { objects } = await session.post('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId, objectGroup: GROUP });
    const { result } = await session.post('Runtime.callFunctionOn', {
      objectId: objects.objectId,
      returnByValue: true,
      functionDeclaration: `function () {
        const out = { live: 0, byCallback: {} };
        for (const t of this) {
          if (t._destroyed) continue;
          out.live++;
          const name = (t._onTimeout && t._onTimeout.name) || '(anonymous)';
          const k = name + (t._repeat ? ' interval' : ' timeout');
          out.byCallback[k] = (out.byCallback[k] || 0) + 1;
        }
        return out;
      }`,
    });
    return result.value;
  } finally {
    await session.post('Runtime.releaseObjectGroup', { objectGroup: GROUP }).catch(() => {});
    delete globalThis[key];
    session.disconnect();
  }
}
