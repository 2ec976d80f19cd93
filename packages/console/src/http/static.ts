import { createReadStream, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPRESS_MIN_BYTES, acceptsGzip, gzipBody } from './compress.js';

/** The built web app shipped in the package (`npm run build:web` writes it). */
export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../web/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ico': 'image/x-icon',
};

const COMPRESSIBLE = new Set(['.js', '.css', '.json', '.svg', '.html']);

/** Headers on every page and asset: nothing is loaded from anywhere but this console, and it cannot be framed. */
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/**
 * Serves the single-page app: files under `root`, hashed assets cached for a year, and index.html for
 * every other GET path (the app routes in the browser).
 */
export class StaticFiles {
  private readonly root: string;
  /** Gzipped hashed assets, by file (a few hundred KiB in all). */
  private readonly gzipped = new Map<string, Promise<Buffer>>();

  constructor(root: string) {
    this.root = resolve(root);
  }

  get built(): boolean {
    return existsSync(join(this.root, 'index.html'));
  }

  async serve(req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    if (!this.built) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
      res.end(`The console's web app is not built (no ${join(this.root, 'index.html')}). Run: npm run build:web -w @flint/console\n`);
      return;
    }
    let decoded: string;
    try {
      decoded = decodeURIComponent(pathname);
    } catch {
      decoded = '/';
    }
    const file = resolve(this.root, `.${normalize(decoded)}`);
    const inside = file === this.root || file.startsWith(this.root + sep);
    const found = inside ? await stat(file).catch(() => undefined) : undefined;
    if (found?.isFile()) return this.send(req, res, file, found.size, decoded.startsWith('/assets/'));
    // A missing asset is a 404 (a stale tab after an upgrade); any other path is a page of the app.
    if (decoded.startsWith('/assets/') || extname(decoded) !== '') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS });
      res.end('not found\n');
      return;
    }
    const index = join(this.root, 'index.html');
    return this.send(req, res, index, (await stat(index)).size, false);
  }

  private async send(req: IncomingMessage, res: ServerResponse, file: string, size: number, immutable: boolean): Promise<void> {
    const headers = {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'accept-encoding',
      ...SECURITY_HEADERS,
    };
    // Scripts and styles go out gzipped (fonts are compressed already); a hashed asset never changes, so it is compressed once.
    if (immutable && COMPRESSIBLE.has(extname(file)) && size >= COMPRESS_MIN_BYTES && acceptsGzip(req)) {
      let zipped = this.gzipped.get(file);
      if (!zipped) {
        zipped = readFile(file).then(gzipBody);
        zipped.catch(() => this.gzipped.delete(file));
        this.gzipped.set(file, zipped);
      }
      const body = await zipped;
      res.writeHead(200, { ...headers, 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': size });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  }
}
