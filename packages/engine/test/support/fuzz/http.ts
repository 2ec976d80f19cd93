/**
 * Raw HTTP upgrade requests for the upgrade fuzz: an arbitrary (fast-check) of garbled requests, and a
 * raw TCP exchange (node:net) that reports what the server did with one: answered with a status,
 * closed, or neither within the time-out (a hang).
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import fc from 'fast-check';

/** How the client ends its side once the request is written. */
export type Ending = 'wait' | 'half-close' | 'destroy';

export interface RawRequest {
  /** The request line's target (the path as sent), kept for the report and the known-bug filter. */
  target: string;
  /** Whether the request carries `Upgrade` and `Connection: upgrade` (node:http then emits 'upgrade'). */
  upgrade: boolean;
  /** The bytes, as they are written: one write per chunk. */
  chunks: Buffer[];
  ending: Ending;
  /** True when the request is cut before the end of its headers (the server may then wait for its handshake time-out). */
  truncated: boolean;
}

export interface Exchange {
  /** The status of the first response line, when one came. */
  status?: number;
  /** The first response line (or the first bytes, when they are not a status line). */
  head: string;
  outcome: 'answered' | 'closed' | 'destroyed' | 'hung';
  /** A socket error seen by the client (a reset is a close). */
  error?: string;
}

/** Sends `request` to `url`'s host and port over a raw socket; settles within `timeoutMs`. */
export function exchange(url: string, request: RawRequest, timeoutMs: number): Promise<Exchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    let settled = false;
    const done = (result: Omit<Exchange, 'head'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const head = received.toString('latin1').split('\r\n', 1)[0] ?? '';
      resolve({ ...result, head });
    };
    const timer = setTimeout(() => done({ outcome: 'hung' }), timeoutMs);
    socket.on('error', (err) => done({ outcome: 'closed', error: err.message, ...statusOf(received) }));
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      // One complete status line is the answer (a 101 is followed by WebSocket frames, a refusal by a body).
      if (received.includes('\r\n')) done({ outcome: 'answered', ...statusOf(received) });
    });
    socket.on('close', () => done({ outcome: received.length > 0 ? 'answered' : 'closed', ...statusOf(received) }));
    socket.once('connect', () => {
      for (const chunk of request.chunks) socket.write(chunk);
      if (request.ending === 'half-close') socket.end();
      else if (request.ending === 'destroy') setImmediate(() => done({ outcome: 'destroyed' }));
    });
  });
}

function statusOf(received: Buffer): { status?: number } {
  const m = /^HTTP\/1\.[01] (\d{3})(?: |\r\n)/.exec(received.toString('latin1'));
  return m ? { status: Number(m[1]) } : {};
}

// ---------------------------------------------------------------------------------------------
// The arbitrary
// ---------------------------------------------------------------------------------------------

const visible = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const token = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,24}$/);
/** A header value node:http accepts (visible ASCII, spaces, tabs, Latin-1). */
const headerValue = fc.string({ unit: fc.oneof(visible, fc.constantFrom(' ', '\t', 'é', 'ÿ')), maxLength: 60 });
/** A header value that may break the message (CR, LF, NUL, any byte). */
const garbledValue = fc.string({ unit: 'binary-ascii', maxLength: 40 });

/** Path pieces that upset URL parsers: percent-escapes (some malformed), dot segments, slashes, brackets, `@`, `:`. */
const pathPiece = fc.oneof(
  fc.string({ unit: visible, maxLength: 12 }),
  fc.constantFrom('%', '%2', '%E0', '%e0%a4', '%ff', '%00', '%2F', '%2e%2e', '..', '.', '//', '\\', '@', ':', '[', ']', '::1', '#', '?', '&', '=', '~', 'ü'),
  fc.stringMatching(/^[a-z0-9_-]{1,12}$/),
);
const pathTail = fc.array(pathPiece, { maxLength: 6 }).map((parts) => parts.join(''));

const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom('?dir=read', '?dir=write', '?dir=read&key=k', '?dir=x', '?token=t', '?', '?dir=read&key=%E0'),
  fc.tuple(fc.constantFrom('?dir=read&key=', '?dir=write&key=', '?token=', '?x='), pathTail).map(([q, v]) => q + v),
);

/** Request targets: the endpoints of both listeners, then the same with random tails and queries, then anything. */
export const requestTarget: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '/',
      '/',
      '/otel',
      '/otel/',
      '/ws/channels/',
      '/stream',
      '/stream/s/g',
      '/stream/s/g/i',
      '/stream/s/g/i/x',
      '/nope',
      '*',
      '/?token=x',
    ),
  },
  {
    weight: 6,
    arbitrary: fc
      .tuple(fc.constantFrom('/ws/channels/', '/stream/', '/stream/s/', '/', '/otel/', '/?x=/ws/channels/'), pathTail, query)
      .map(([a, b, c]) => a + b + c),
  },
  { weight: 1, arbitrary: fc.webPath() },
  { weight: 1, arbitrary: fc.webUrl() },
  { weight: 1, arbitrary: fc.string({ unit: visible, minLength: 1, maxLength: 30 }) },
);

const method = fc.oneof(
  { weight: 20, arbitrary: fc.constant('GET') },
  fc.constantFrom('get', 'POST', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH', 'CONNECT', 'PRI'),
  token,
);
const version = fc.oneof(
  { weight: 20, arbitrary: fc.constant('HTTP/1.1') },
  fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.12', 'http/1.1', 'HTTP/1.1 x'),
);

const KEY = () => randomBytes(16).toString('base64');

type Header = [string, string];

/** Absent one time in `absentOneIn`. */
const maybe = <T>(arb: fc.Arbitrary<T>, absentOneIn: number) => fc.option(arb, { nil: undefined, freq: absentOneIn });
/** Present one time in `presentOneIn`. */
const rare = <T>(arb: fc.Arbitrary<T>, presentOneIn: number) =>
  fc.oneof({ weight: presentOneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

/** The headers of a WebSocket upgrade, each of them sometimes missing, wrong, or random. */
const headers: fc.Arbitrary<{ list: Header[]; upgrade: boolean }> = fc
  .record({
    host: maybe(fc.oneof({ weight: 9, arbitrary: fc.constant('127.0.0.1') }, headerValue), 20),
    upgrade: maybe(fc.oneof({ weight: 20, arbitrary: fc.constant('websocket') }, fc.constantFrom('WebSocket', 'h2c', ''), headerValue), 20),
    connection: maybe(
      fc.oneof({ weight: 20, arbitrary: fc.constant('Upgrade') }, fc.constantFrom('keep-alive, Upgrade', 'close', 'upgrade, close', ''), headerValue),
      20,
    ),
    key: maybe(
      fc.oneof(
        { weight: 20, arbitrary: fc.constant('valid') },
        fc.constantFrom('', 'short', 'dGhlIHNhbXBsZSBub25jZQ', '!!!!!!!!!!!!!!!!!!!!!!=='),
        headerValue,
      ),
      20,
    ),
    version: maybe(fc.oneof({ weight: 20, arbitrary: fc.constant('13') }, fc.constantFrom('8', '12', '14', '0', '13, 8', '-1', ''), headerValue), 20),
    origin: rare(fc.oneof(fc.constant('https://evil.example'), headerValue), 12),
    authorization: rare(fc.oneof(fc.constant('Bearer x'), headerValue), 12),
    reattach: rare(headerValue, 12),
    protocol: rare(headerValue, 12),
    extensions: rare(fc.oneof(fc.constantFrom('permessage-deflate', 'permessage-deflate; client_max_window_bits=99', 'x; =;'), headerValue), 12),
    contentLength: rare(fc.oneof(fc.constantFrom('0', '5', '-1', '99999999999999999999', 'abc'), headerValue), 12),
    transferEncoding: rare(fc.constantFrom('chunked', 'gzip', 'chunked, chunked', 'x'), 12),
    extra: fc.array(fc.tuple(token, headerValue), { maxLength: 3 }),
    duplicate: rare(fc.constant(true), 10),
    garbled: rare(fc.tuple(fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 20 }), garbledValue), 12),
    huge: rare(fc.integer({ min: 1000, max: 80_000 }), 30),
    many: rare(fc.integer({ min: 100, max: 3000 }), 30),
  })
  .map((h) => {
    const list: Header[] = [];
    const add = (name: string, value: string | undefined) => {
      if (value !== undefined) list.push([name, value]);
    };
    add('Host', h.host);
    add('Upgrade', h.upgrade);
    add('Connection', h.connection);
    add('Sec-WebSocket-Key', h.key === 'valid' ? KEY() : h.key);
    add('Sec-WebSocket-Version', h.version);
    add('Origin', h.origin);
    add('Authorization', h.authorization);
    add('x-flint-reattach', h.reattach);
    add('Sec-WebSocket-Protocol', h.protocol);
    add('Sec-WebSocket-Extensions', h.extensions);
    add('Content-Length', h.contentLength);
    add('Transfer-Encoding', h.transferEncoding);
    for (const [name, value] of h.extra) add(name, value);
    if (h.duplicate === true && h.key !== undefined) add('Sec-WebSocket-Key', KEY());
    if (h.garbled) add(h.garbled[0], h.garbled[1]);
    if (h.huge !== undefined) add('X-Huge', 'a'.repeat(h.huge));
    if (h.many !== undefined) for (let i = 0; i < h.many; i++) add(`X-Many-${i}`, String(i));
    const upgrade = h.upgrade !== undefined && h.connection !== undefined && /\bupgrade\b/i.test(h.connection) && h.upgrade !== '';
    return { list, upgrade };
  });

/** A masked client WebSocket frame (what may follow an upgrade's headers in the same packet). */
function wsFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.from([0x80 | opcode, 0x80 | 126, len >> 8, len & 0xff]);
  const body = Buffer.from(payload.map((b, i) => b ^ (mask[i % 4] as number)));
  return Buffer.concat([head, mask, body]);
}

/** Bytes after the headers: nothing, random bytes, or WebSocket frames (good or broken). */
const trailer: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(Buffer.alloc(0)) },
  fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => Buffer.from(b)),
  fc.constant(wsFrame(1, Buffer.from('{"type":"ping"}'))),
  fc.constant(wsFrame(1, Buffer.from('not json'))),
  fc.constant(wsFrame(2, Buffer.from('OTLPgarbage'))),
  fc.constant(wsFrame(8, Buffer.from([0x03, 0xe8]))),
  fc.constant(wsFrame(9, Buffer.alloc(0))),
  fc.constant(Buffer.from([0x81, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => wsFrame(1, Buffer.from(b))),
);

/** Splits `buf` into chunks at the given (sorted, deduplicated) offsets: each is one write. */
function split(buf: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const c of at) {
    if (c > from) chunks.push(buf.subarray(from, c));
    from = Math.max(from, c);
  }
  if (from < buf.length) chunks.push(buf.subarray(from));
  return chunks;
}

const ending = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Ending>('wait') },
  { weight: 3, arbitrary: fc.constant<Ending>('half-close') },
  fc.constant<Ending>('destroy'),
);

/** A garbled or hostile upgrade request, sometimes cut short, sometimes pure noise. */
export const rawRequest: fc.Arbitrary<RawRequest> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .record({
        method,
        target: requestTarget,
        version,
        headers,
        trailer,
        lineEnd: fc.oneof({ weight: 20, arbitrary: fc.constant('\r\n') }, fc.constant('\n')),
        cuts: fc.array(fc.nat(), { maxLength: 3 }),
        cut: rare(fc.nat(), 10),
        ending,
      })
      .map((r) => {
        const eol = r.lineEnd;
        const head = `${r.method} ${r.target} ${r.version}${eol}${r.headers.list.map(([n, v]) => `${n}: ${v}${eol}`).join('')}${eol}`;
        let bytes = Buffer.concat([Buffer.from(head, 'latin1'), r.trailer]);
        const truncated = r.cut !== undefined && r.cut % bytes.length < head.length;
        if (r.cut !== undefined) bytes = bytes.subarray(0, r.cut % bytes.length);
        return { target: r.target, upgrade: r.headers.upgrade, chunks: split(bytes, r.cuts), ending: r.ending, truncated };
      }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.uint8Array({ minLength: 1, maxLength: 2000 }), ending)
      .map(([b, e]) => ({ target: '', upgrade: false, chunks: [Buffer.from(b)], ending: e, truncated: true })),
  },
);
