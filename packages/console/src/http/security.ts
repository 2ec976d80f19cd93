import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { MUTATION_HEADER } from '../api-types.js';
import { ApiFailure } from './failure.js';

export const COOKIE_NAME = 'flint_console_token';

/** Compares secrets in constant time (both hashed first, so lengths do not leak either). */
function same(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

function cookieToken(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name !== COOKIE_NAME) continue;
    try {
      return decodeURIComponent(rest.join('='));
    } catch {
      return undefined; // not a value this console set: no token
    }
  }
  return undefined;
}

/**
 * The console's access rules. With a token (required on a non-loopback host) every API call and
 * WebSocket must present it: `Authorization: Bearer`, or the session cookie set by /_console/login.
 */
export class Security {
  constructor(private readonly token: string | undefined) {}

  get tokenRequired(): boolean {
    return this.token !== undefined;
  }

  /** Whether `candidate` is the console token. */
  matches(candidate: string): boolean {
    return this.token !== undefined && same(candidate, this.token);
  }

  /** Throws 401 `token_required` unless the request carries the token (always passes without one). */
  authenticate(req: IncomingMessage): void {
    if (this.token === undefined) return;
    const auth = req.headers.authorization;
    const bearer = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
    const presented = bearer ?? cookieToken(req);
    if (presented === undefined || !this.matches(presented)) {
      throw new ApiFailure(401, 'token_required', 'this console requires its token: open it with ?token=… or send Authorization: Bearer <token>');
    }
  }

  /** The Set-Cookie value that logs a browser in (HttpOnly, SameSite=Strict, the whole console). */
  loginCookie(secure: boolean): string {
    return `${COOKIE_NAME}=${encodeURIComponent(this.token ?? '')}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
  }
}

/**
 * A state-changing call must carry `x-flint-console: 1`. Browsers do not let a page of another origin
 * add a custom header without a CORS preflight, which this server never approves, so no other site can
 * make a visitor's browser change anything (CSRF), token or not.
 */
export function requireMutationHeader(req: IncomingMessage): void {
  if (req.headers[MUTATION_HEADER] !== '1') {
    throw new ApiFailure(403, 'same_origin_header_required', `state-changing calls must carry the header ${MUTATION_HEADER}: 1`);
  }
}

/**
 * A WebSocket upgrade must come from a page of this console (browsers always send Origin on
 * WebSocket upgrades; clients that are not browsers may omit it).
 */
export function checkOrigin(req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    throw new ApiFailure(403, 'origin_forbidden', `the Origin ${origin} is not a URL`);
  }
  if (host !== req.headers.host)
    throw new ApiFailure(403, 'origin_forbidden', `WebSocket connections are only accepted from this console's own pages (Origin ${origin})`);
}
