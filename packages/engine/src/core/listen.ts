import type { Server } from 'node:http';

/**
 * Binds `server` to `host:port` (0 = a free port); resolves with the port it got. A failure (e.g.
 * EADDRINUSE) rejects with an error that keeps the errno `code` and says which setting chose the
 * port: `portSetting` (`bridge.port (from ${FLINT_BRIDGE_PORT})`), when given.
 */
export async function listen(server: Server, host: string, port: number, portSetting?: string): Promise<{ host: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) => reject(listenError(err, host, port, portSetting));
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const address = server.address();
  return { host, port: typeof address === 'object' && address ? address.port : port };
}

const PORT_ERRORS: Record<string, string> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
};

function listenError(err: NodeJS.ErrnoException, host: string, port: number, portSetting: string | undefined): NodeJS.ErrnoException {
  const portError = err.code !== undefined ? PORT_ERRORS[err.code] : undefined;
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const message = portError
    ? `cannot listen on ${address}: ${portError} (${err.code})${portSetting ? `; the port is set by ${portSetting}` : ''}`
    : `cannot listen on ${address}: ${err.message}`;
  return Object.assign(new Error(message, { cause: err }), { code: err.code, errno: err.errno, syscall: err.syscall });
}

/** `scheme://host:port`, with an IPv6 host in brackets. */
export function urlOf(scheme: string, host: string, port: number): string {
  return `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
