/**
 * The built web app (packages/console/dist/web, written by `npm run build:web -w @flint/console`):
 * index.html for the app's pages with the security headers, assets, 404 for a missing asset, and no
 * way out of the web root.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConsoleServer } from '@flint/console';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, startTestConsole } from './support/console-env.js';

const webRoot = join(dirname(fileURLToPath(import.meta.url)), '../dist/web');
const built = existsSync(join(webRoot, 'index.html'));
if (!built) console.warn(`static.test.ts: skipped, the web app is not built (${webRoot}); run npm run build:web -w @flint/console`);

let server: ConsoleServer;

beforeAll(async () => {
  // The pages need no engine: the bridge port is closed and the console keeps retrying in the background.
  server = await startTestConsole({ port: 0, bridgePort: await closedPort(), noOtel: true });
});
afterAll(() => server?.close());

/** A GET with the path sent exactly as written (fetch would normalise `..`). */
async function rawGet(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(!built)('the web app', () => {
  const index = built ? readFileSync(join(webRoot, 'index.html'), 'utf8') : '';

  it('serves index.html at / and at every page of the app, with a Content-Security-Policy', async () => {
    for (const path of ['/', '/functions', '/states/users', '/queues?tab=dead']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await res.text()).toBe(index);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-cache');
    }
  });

  it('serves the built assets, cached for good, and answers HEAD without a body', async () => {
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(index)?.[1];
    expect(script).toBeDefined();
    const res = await fetch(`${server.url}${script}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('immutable');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const head = await fetch(`${server.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('answers a missing asset or file with 404, not the page', async () => {
    for (const path of ['/assets/missing.js', '/favicon-nope.png']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('<html');
    }
  });

  it('does not let a path escape the web root', async () => {
    const pkg = readFileSync(join(webRoot, '../../package.json'), 'utf8');
    for (const path of [
      '/..%2f..%2fpackage.json',
      '/../../package.json',
      '/assets/..%2f..%2f..%2fpackage.json',
      '/%2e%2e/%2e%2e/package.json',
      '/..%5c..%5cpackage.json',
    ]) {
      const res = await rawGet(path);
      expect(res.body, path).not.toBe(pkg);
      expect(res.body, path).not.toContain('"@flint/console"');
      expect([200, 404], path).toContain(res.status);
    }
  });

  it('refuses other methods on pages with 405', async () => {
    const res = await fetch(`${server.url}/functions`, { method: 'POST' });
    expect(res.status).toBe(405);
  });

  it('sends scripts gzipped to a browser that takes gzip, and as they are to one that does not', async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1] as string;
    expect(script).toBeDefined();
    const plain = readFileSync(join(webRoot, script));
    const zipped = await fetch(`${server.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(Number(zipped.headers.get('content-length'))).toBeLessThan(plain.length / 2);
    // fetch decodes it: the same bytes as the file.
    expect(Buffer.from(await zipped.arrayBuffer()).equals(plain)).toBe(true);
    const raw = await rawGet(script);
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(Number(raw.headers['content-length'])).toBe(plain.length);
  });
});
