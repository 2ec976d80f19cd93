/** The files `flint init` writes: a runnable project with the engine, its config and a first worker. */

export interface ProjectSpec {
  /** npm package name of the project. */
  name: string;
  /** Version specs of @flint/cli and @flint/sdk (`^0.1.0`, or `file:` tarballs). */
  dependencies: Record<string, string>;
  /** Where the Flint packages that @flint/cli and @flint/sdk depend on come from, when not the registry. */
  overrides?: Record<string, string>;
}

export interface ProjectFile {
  path: string;
  /** One line saying what the file is, printed by `flint init`. */
  about: string;
  content: string;
}

/** The default ports of the generated config (the engine's defaults). */
export const DEFAULT_PORTS = { bridge: 49134, http: 3111 } as const;

export function projectFiles(spec: ProjectSpec): ProjectFile[] {
  return [
    { path: 'package.json', about: 'dependencies and the start/dev scripts', content: packageJson(spec) },
    { path: 'flint-config.yaml', about: 'engine config: worker bridge, HTTP module, state module', content: CONFIG },
    { path: 'worker.mjs', about: 'your first worker: the function hello::world and the route GET /hello/:name', content: worker(spec.name) },
    { path: '.gitignore', about: 'node_modules/, .flint-data/', content: GITIGNORE },
    { path: 'README.md', about: 'how to run and call it', content: readme(spec.name) },
  ];
}

function packageJson(spec: ProjectSpec): string {
  const pkg: Record<string, unknown> = {
    name: spec.name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: {
      start: 'flint start --worker "node worker.mjs"',
      dev: 'flint start --worker "node --watch worker.mjs"',
    },
    engines: { node: '>=20.19' },
    dependencies: spec.dependencies,
  };
  if (spec.overrides) pkg.overrides = spec.overrides;
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

const CONFIG = `# Flint engine configuration: \`flint start\` (npm start) reads ./flint-config.yaml.
# Every key is optional; docs/config.md in the Flint repository lists them all with their defaults.
# Values may use \${VAR} or \${VAR:default} (environment variables), e.g. FLINT_BRIDGE_PORT=0 picks a free port.

bridge:
  # Workers connect here; \`flint start --worker …\` hands the URL to its workers as FLINT_URL.
  host: 127.0.0.1
  port: \${FLINT_BRIDGE_PORT:${DEFAULT_PORTS.bridge}}

log:
  level: info # fatal, error, warn, info, debug, trace or silent

modules:
  # HTTP triggers: the routes your workers register are served here.
  - name: flint-http
    config:
      host: 127.0.0.1
      port: \${FLINT_HTTP_PORT:${DEFAULT_PORTS.http}}

  # Key-value state (state::get, state::set, …). In memory: it is lost when the engine stops.
  # To keep it across restarts, replace the config below with
  #   config: { adapter: { name: kv, config: { store_method: file_based, file_path: ./.flint-data/state } } }
  - name: flint-state
    config:
      adapter: { name: kv, config: { store_method: in_memory } }
`;

function worker(name: string): string {
  return `// Your first Flint worker: one function and one HTTP route.
// \`npm start\` runs the engine and this worker; the engine tells it where to connect through FLINT_URL
// (without it the SDK uses ws://127.0.0.1:${DEFAULT_PORTS.bridge}).
import { registerWorker } from '@flint/sdk';

const worker = registerWorker(process.env.FLINT_URL, { workerName: ${JSON.stringify(name)} });

const greet = (name) => ({ message: \`Hello, \${typeof name === 'string' && name ? name : 'world'}!\` });

// A function any worker (or \`npx flint trigger\`) can call:
//   npx flint trigger --function-id hello::world --payload '{"name":"Ada"}'
worker.registerFunction('hello::world', async (input) => greet(input?.name), {
  description: 'Greets someone by name',
  request_format: { type: 'object', properties: { name: { type: 'string' } } },
  response_format: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
});

// The same greeting over HTTP, served by the engine's flint-http module:
//   curl http://127.0.0.1:${DEFAULT_PORTS.http}/hello/Ada
worker.registerFunction('hello::http', async (req) => ({ status_code: 200, body: greet(req.path_params.name) }), {
  description: 'Greets over HTTP: GET /hello/:name',
});
worker.registerTrigger({ type: 'http', function_id: 'hello::http', config: { api_path: '/hello/:name', http_method: 'GET' } });

worker.on('connected', () => console.log('worker connected: try  npx flint trigger --function-id hello::world --payload \\'{"name":"Ada"}\\''));

const stop = () => worker.shutdown().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
`;
}

const GITIGNORE = `node_modules/
.flint-data/
*.log
`;

function readme(name: string): string {
  return `# ${name}

A Flint project: the engine and one worker (\`worker.mjs\`).

\`\`\`sh
npm install
npm start        # the engine (worker bridge on ws://127.0.0.1:${DEFAULT_PORTS.bridge}, HTTP on port ${DEFAULT_PORTS.http}) and worker.mjs
\`\`\`

\`npm run dev\` does the same and restarts the worker when \`worker.mjs\` changes. Stop with Ctrl+C.

Call the function from a second terminal:

\`\`\`sh
npx flint trigger --function-id hello::world --payload '{"name":"Ada"}'
# {
#   "message": "Hello, Ada!"
# }
curl http://127.0.0.1:${DEFAULT_PORTS.http}/hello/Ada
npx flint functions     # what is registered
npx flint workers
\`\`\`

- \`worker.mjs\`: the functions and triggers of this project (\`@flint/sdk\`).
- \`flint-config.yaml\`: the engine's ports and modules. \`FLINT_BRIDGE_PORT\` and \`FLINT_HTTP_PORT\`
  change the ports without editing it.

Flint's documentation (\`docs/\` in the Flint repository): getting-started.md, sdk.md (the worker SDK),
http.md (routes), state.md (the key-value store), config.md, cli.md (the \`flint\` command).
`;
}
