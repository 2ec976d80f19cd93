// A minimal Flint worker: registers hello::world and answers with a greeting.
// Run it against a running engine with `node examples/hello-world/worker.mjs`
// (it connects to $FLINT_URL, or ws://127.0.0.1:49134).
import { Logger, registerWorker } from '@flint/sdk';

const worker = registerWorker(process.env.FLINT_URL, { workerName: 'hello-world' });
const logger = new Logger(worker, 'hello-world');

worker.registerFunction(
  'hello::world',
  async (input) => {
    const name = typeof input?.name === 'string' ? input.name : 'world';
    logger.info(`greeting ${name}`);
    return { message: `Hello, ${name}!` };
  },
  {
    description: 'Greets someone by name',
    request_format: { type: 'object', properties: { name: { type: 'string' } } },
    response_format: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
);

worker.on('connected', () => console.log('hello-world worker connected; try: npx flint trigger --function-id hello::world --payload \'{"name":"Ada"}\''));

const stop = () => worker.shutdown().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
