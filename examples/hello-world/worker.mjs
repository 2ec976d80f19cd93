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

// The same greeting over HTTP (flint-http module): GET http://127.0.0.1:3111/hello/Ada
worker.registerFunction('hello::http', (req) => ({ status_code: 200, body: { message: `Hello, ${req.path_params.name}!` } }), {
  description: 'Greets over HTTP: GET /hello/:name',
});
worker.registerTrigger({ type: 'http', function_id: 'hello::http', config: { api_path: '/hello/:name', http_method: 'GET' } });

worker.on('connected', () => console.log('hello-world worker connected; try: npx flint trigger --function-id hello::world --payload \'{"name":"Ada"}\''));

const stop = () => worker.shutdown().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
