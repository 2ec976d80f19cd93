import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type ErrorCode, formatError } from '@flint/protocol';
import { LogThrottle } from '../../lib/log-throttle.js';
import type { Logger } from '../logger.js';

/** Who may open a bridge socket (`bridge.allowed_origins`, `bridge.auth_token`). */
export interface BridgeAccess {
  /** Exact `Origin` values allowed; `"*"` allows every origin. Upgrades without `Origin` are not affected. */
  allowedOrigins: readonly string[];
  /** When set, worker and telemetry sockets must present it. */
  authToken: string | undefined;
}

export interface Refusal {
  code: ErrorCode;
  message: string;
}

const CHANNEL_PATH = '/ws/channels/';
/** An attacker-chosen header is cut to this length in the log. */
const MAX_LOGGED = 200;
/** Refusals of one kind are logged at most this often (a page retrying in a loop must not flood the log), with a count of those skipped. */
const LOG_INTERVAL_MS = 10_000;

/** Logs one kind of refusal: the first at once, then at most once per interval, saying how many were not logged. */
class RefusalLog {
  private readonly throttle = new LogThrottle(LOG_INTERVAL_MS);
  private skipped = 0;

  constructor(private readonly log: Logger) {}

  warn(fields: Record<string, unknown>, message: string): void {
    if (!this.throttle.due()) {
      this.skipped++;
      return;
    }
    const more = this.skipped > 0 ? ` (and ${this.skipped} more like it since the last such line)` : '';
    this.log.warn({ ...fields, not_logged: this.skipped }, `${message}${more}`);
    this.skipped = 0;
  }
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * The checks every bridge upgrade passes before it is routed: a request from a web page (it carries
 * `Origin`) is refused unless its origin is allowed, and when the bridge has a token, worker and
 * telemetry sockets must present it. Channel sockets need no token: their per-channel access key,
 * handed out only over an accepted connection, already proves the right to them.
 */
export class UpgradeGuard {
  private readonly tokenDigest: Buffer | undefined;
  private readonly anyOrigin: boolean;
  private readonly origins: ReadonlySet<string>;
  private readonly originLog: RefusalLog;
  private readonly tokenLog: RefusalLog;

  constructor(
    access: BridgeAccess,
    log: Logger,
    /** The listener's config path (`bridge`, `bridge[1]`), named in the refusal log. */
    private readonly setting = 'bridge',
  ) {
    this.originLog = new RefusalLog(log);
    this.tokenLog = new RefusalLog(log);
    this.tokenDigest = access.authToken === undefined ? undefined : digest(access.authToken);
    this.anyOrigin = access.allowedOrigins.includes('*');
    this.origins = new Set(access.allowedOrigins);
  }

  /** Why the upgrade to `url` is refused (logged), or undefined when it may go on. */
  check(req: IncomingMessage, url: URL): Refusal | undefined {
    const origin = req.headers.origin;
    if (origin !== undefined && !this.anyOrigin && !this.origins.has(origin)) {
      const shown = origin.slice(0, MAX_LOGGED);
      this.originLog.warn(
        { ip: req.socket.remoteAddress, origin: shown, path: url.pathname },
        `refused a bridge connection from a web page: origin ${shown} is not in ${this.setting}.allowed_origins`,
      );
      return { code: 'origin_not_allowed', message: formatError('origin_not_allowed', { origin: shown }) };
    }
    if (this.tokenDigest && !url.pathname.startsWith(CHANNEL_PATH) && !this.tokenMatches(req, url, this.tokenDigest)) {
      const how = bearerToken(req) !== undefined || url.searchParams.has('token') ? 'a wrong token' : 'no token';
      this.tokenLog.warn({ ip: req.socket.remoteAddress, path: url.pathname }, `refused a bridge connection with ${how} (${this.setting}.auth_token is set)`);
      return { code: 'unauthorized', message: formatError('unauthorized') };
    }
    return undefined;
  }

  private tokenMatches(req: IncomingMessage, url: URL, expected: Buffer): boolean {
    const presented = bearerToken(req) ?? url.searchParams.get('token') ?? undefined;
    // Equal-length digests, compared in constant time: neither the length nor a prefix of the token leaks.
    return presented !== undefined && timingSafeEqual(digest(presented), expected);
  }
}

function bearerToken(req: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
  return match ? (match[1] as string).trim() : undefined;
}

/**
 * The URL an upgrade asks for. iii-sdk builds a channel's URL by appending `/ws/channels/<id>?key=…`
 * to its engine URL; when that URL carries a query (`ws://host:49134/?token=…`) the channel path ends
 * up inside the query, and is taken back out here. Undefined for a target no URL can be made of (`//`).
 */
export function upgradeUrl(raw: string): URL | undefined {
  const query = raw.indexOf('?');
  const channel = raw.indexOf(CHANNEL_PATH);
  try {
    return new URL(query >= 0 && channel > query ? raw.slice(channel) : raw, 'http://bridge');
  } catch {
    return undefined;
  }
}

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\./.test(h) || /^::ffff:127\./.test(h);
}

/** The start-up warning for a bridge that other machines can reach and that has no token. */
export function warnIfExposed(host: string, access: BridgeAccess, log: Logger, setting = 'bridge', hasAuthFunction = false): void {
  if (access.authToken !== undefined || hasAuthFunction || isLoopback(host)) return;
  log.warn(
    { host },
    `the bridge listens on ${host}, which other machines can reach, and has no token: anyone who reaches it can register functions and triggers and call every function. Set ${setting}.auth_token (or FLINT_BRIDGE_TOKEN) or ${setting}.access.auth_function_id, or bind ${setting}.host to 127.0.0.1`,
  );
}
