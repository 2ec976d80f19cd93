// The Node side of the Python example: provides node::decorate (which the Python route
// GET /greet/:name calls) and calls the Python function greet::hello.
// Run it against a running engine with `node examples/python-worker/node_caller.mjs`
// (it connects to $FLINT_URL, or ws://127.0.0.1:49134); it keeps serving until Ctrl+C.
import { setTimeout as sleep } from 'node:timers/promises';
import { FlintInvocationError, registerWorker } from '@flint/sdk';

const worker = registerWorker(process.env.FLINT_URL, { workerName: 'node-caller' });

worker.registerFunction('node::decorate', async ({ text }) => ({ text: `✨ ${text} ✨`, runtime: `node ${process.version}` }), {
  description: 'Dresses up a text (called by the Python route GET /greet/:name)',
  request_format: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
});

// Calls greet::hello, waiting (up to 30 s) for the Python worker to register it.
async function callPython(payload) {
  for (let waited = 0; ; waited += 500) {
    try {
      return await worker.trigger({ function_id: 'greet::hello', payload });
    } catch (err) {
      if (!(err instanceof FlintInvocationError) || err.code !== 'function_not_found' || waited >= 30_000) throw err;
      if (waited === 0) console.log('waiting for greet::hello (start examples/python-worker/worker.py)…');
      await sleep(500);
    }
  }
}

await worker.waitConnected();
console.log('greet::hello →', await callPython({ name: 'Ada', language: 'de', excited: true }));

// The Python SDK converts the payload into its Greeting dataclass and names the field that does not fit.
try {
  await worker.trigger({ function_id: 'greet::hello', payload: { name: 'Ada', language: 'it' } });
} catch (err) {
  console.log(`greet::hello with language "it" → ${err.code}: ${err.message}`);
}

console.log('serving node::decorate; try: curl http://127.0.0.1:3111/greet/Ada?language=fr');

const stop = () => worker.shutdown().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
