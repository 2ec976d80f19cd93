/**
 * A real OTLP/HTTP receiver for export tests: takes `POST /v1/traces` and `/v1/logs` bodies in
 * protobuf and decodes them with the OpenTelemetry protocol's generated types (shipped with
 * `@opentelemetry/otlp-transformer` 0.57). It can answer at once, hold every request open (a slow
 * collector) or fail them.
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';

// biome-ignore lint/suspicious/noExplicitAny: the generated protobuf types are plain CommonJS without useful typings here
const proto = (createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js') as any).opentelemetry.proto;

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  /** OTLP's status code (0 unset, 1 ok, 2 error) and message. */
  status: { code: number; message: string };
  /** Wall-clock nanoseconds (exact to about 0.25 µs as JS numbers). */
  startTimeUnixNano: number;
  endTimeUnixNano: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
}

export interface ReceivedLog {
  service: string;
  body: string;
  severityText: string;
  severityNumber: number;
  traceId: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL to give as `endpoint`. */
  url: string;
  spans: ReceivedSpan[];
  logs: ReceivedLog[];
  /** Requests that arrived, and those answered. */
  received: number;
  answered: number;
  /** `ok` answers 200 at once; `hold` keeps every request open until `release()`; `fail` answers 503. */
  mode: 'ok' | 'hold' | 'fail';
  release(): void;
  close(): Promise<void>;
}

const hex = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('hex') : '');

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages
function value(v: any): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined && v.stringValue !== '') return v.stringValue;
  if (v.intValue !== undefined && v.intValue !== null) return Number(v.intValue);
  if (v.doubleValue !== undefined && v.doubleValue !== null) return v.doubleValue;
  if (v.boolValue !== undefined && v.boolValue !== null) return v.boolValue;
  return v.stringValue;
}

// biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages
const attributes = (list: any[] | undefined) => Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));

/** Listens on `port` (0: a free one) on 127.0.0.1. */
export async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const held: (() => void)[] = [];
  const receiver: OtlpReceiver = {
    url: '',
    spans: [],
    logs: [],
    received: 0,
    answered: 0,
    mode: 'ok',
    release: () => {
      for (const answer of held.splice(0)) answer();
    },
    close: () =>
      new Promise<void>((resolve) => {
        receiver.release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.received++;
      const body = Buffer.concat(chunks);
      const answer = (status: number) => {
        receiver.answered++;
        res.writeHead(status, { 'content-type': 'application/x-protobuf' }).end();
      };
      if (receiver.mode === 'fail') return answer(503);
      if (req.url === '/v1/traces') {
        const request = proto.collector.trace.v1.ExportTraceServiceRequest.decode(body);
        for (const rs of request.resourceSpans) {
          const service = String(attributes(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans) {
            for (const s of ss.spans) {
              receiver.spans.push({
                service,
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: hex(s.parentSpanId),
                name: s.name,
                kind: s.kind,
                status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
                startTimeUnixNano: Number(String(s.startTimeUnixNano)),
                endTimeUnixNano: Number(String(s.endTimeUnixNano)),
                attributes: attributes(s.attributes),
                // biome-ignore lint/suspicious/noExplicitAny: decoded protobuf messages
                events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: attributes(e.attributes) })),
              });
            }
          }
        }
      } else if (req.url === '/v1/logs') {
        const request = proto.collector.logs.v1.ExportLogsServiceRequest.decode(body);
        for (const rl of request.resourceLogs) {
          const service = String(attributes(rl.resource?.attributes)['service.name']);
          for (const sl of rl.scopeLogs) {
            for (const r of sl.logRecords) {
              receiver.logs.push({
                service,
                body: String(value(r.body)),
                severityText: r.severityText,
                severityNumber: r.severityNumber,
                traceId: hex(r.traceId),
                attributes: attributes(r.attributes),
              });
            }
          }
        }
      } else return answer(404);
      if (receiver.mode === 'hold') held.push(() => answer(200));
      else answer(200);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
