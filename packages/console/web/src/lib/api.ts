import { type ApiError, MUTATION_HEADER } from '../../../src/api-types.js';

/** An API call that failed: the HTTP status and the stable `code` of the console's error body. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly engineCode?: string,
  ) {
    super(message);
  }
}

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** Called when any call answers 401: the shell then asks for the console token. */
export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers[MUTATION_HEADER] = '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(`/${path.replace(/^\//, '')}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch (err) {
    throw new ApiRequestError(0, 'console_unreachable', `The console server cannot be reached (${(err as Error).message})`);
  }
  const text = await res.text();
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!res.ok) {
    const e = (parsed ?? {}) as Partial<ApiError>;
    if (res.status === 401) for (const l of unauthorizedListeners) l();
    throw new ApiRequestError(res.status, e.code ?? `http_${res.status}`, e.error ?? (typeof parsed === 'string' ? parsed : res.statusText), e.engine_code);
  }
  return parsed as T;
}

/** The console server's JSON API (see api-types.ts for every route). */
export const api = {
  get: <T>(path: string) => request<T>('GET', path),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body ?? {}),
  put: <T>(path: string, body?: unknown) => request<T>('PUT', path, body ?? {}),
  delete: <T>(path: string) => request<T>('DELETE', path),
};

/** `encodeURIComponent` for one path segment. */
export const seg = (s: string) => encodeURIComponent(s);
