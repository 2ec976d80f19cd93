// Baseline for bench/cluster: a bare NATS responder, the twin of ws-echo-server.mjs. argv[2]: NATS URL,
// argv[3]: subject. Each request's body is parsed as JSON and answered with it re-serialised (msg.respond).
// Answers IPC { type: 'calls' } with { calls }. Prints {"ready":true} once its subscription reached the server.
import { connect } from 'nats';
import { serveChild } from './proc.mjs';

const [url, subject] = process.argv.slice(2);
const encoder = new TextEncoder();
const decoder = new TextDecoder();
let calls = 0;
const nc = await connect({ servers: url, name: 'flint-bench-nats-echo', timeout: 5000 });
nc.subscribe(subject, {
  callback: (err, msg) => {
    if (err || !msg.reply) return;
    calls++;
    msg.respond(encoder.encode(JSON.stringify(JSON.parse(decoder.decode(msg.data)))));
  },
});
await nc.flush();

serveChild(() => nc.drain(), { calls: () => ({ calls }) });
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
