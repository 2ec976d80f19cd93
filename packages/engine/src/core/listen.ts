import type { Server } from 'node:http';

/** Binds `server` to `host:port` (0 = a free port); resolves with the port it got, rejects on e.g. EADDRINUSE. */
export async function listen(server: Server, host: string, port: number): Promise<{ host: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return { host, port: typeof address === 'object' && address ? address.port : port };
}

/** `scheme://host:port`, with an IPv6 host in brackets. */
export function urlOf(scheme: string, host: string, port: number): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
