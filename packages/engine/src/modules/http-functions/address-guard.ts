import { BlockList, isIP } from 'node:net';

/**
 * Addresses an HTTP function may not reach while `block_private_addresses` is on: this host, private
 * networks, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, benchmarking, multicast
 * and reserved ranges.
 */
const IPV4_BLOCKED: [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const IPV6_BLOCKED: [string, number][] = [
  ['::', 128],
  ['::1', 128],
  // NAT64's local-use prefix (RFC 8215): translated to IPv4 addresses of the local network.
  ['64:ff9b:1::', 48],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];

const blocked = new BlockList();
for (const [net, prefix] of IPV4_BLOCKED) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of IPV6_BLOCKED) blocked.addSubnet(net, prefix, 'ipv6');

/**
 * True when `address` (an IP address as `dns.lookup` gives it) is in a blocked range. An IPv6 address
 * that carries IPv4 addresses (see embeddedIPv4) is checked as each of them too; anything that is not
 * an IP address counts as blocked.
 */
export function isBlockedAddress(address: string): boolean {
  const plain = address.split('%')[0] ?? address; // a zone index (fe80::1%eth0) is not part of the address
  const family = isIP(plain);
  if (family === 4) return blocked.check(plain, 'ipv4');
  if (family !== 6) return true;
  if (blocked.check(plain, 'ipv6')) return true;
  return embeddedIPv4(plain).some((v4) => blocked.check(v4, 'ipv4'));
}

/**
 * The IPv4 addresses an IPv6 address stands for or leads to (none for any other): IPv4-mapped
 * (`::ffff:127.0.0.1`), IPv4-compatible (`::127.0.0.1`, deprecated but still parsed), NAT64's
 * well-known prefix (`64:ff9b::7f00:1`, RFC 6052), 6to4 (`2002:7f00:1::`, RFC 3056) and Teredo
 * (`2001:0:<server>:<flags>:<port>:<client>`, RFC 4380: the client's address, which packets to it are
 * tunnelled to, is stored with every bit inverted; its server's address is returned as well).
 */
export function embeddedIPv4(address: string): string[] {
  const g = ipv6Groups(address);
  if (!g) return [];
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) return [quad(g[6] ?? 0, g[7] ?? 0)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [quad(g[6] ?? 0, g[7] ?? 0)];
  if (g[0] === 0x2002) return [quad(g[1] ?? 0, g[2] ?? 0)];
  if (g[0] === 0x2001 && g[1] === 0) return [quad(~(g[6] ?? 0) & 0xffff, ~(g[7] ?? 0) & 0xffff), quad(g[2] ?? 0, g[3] ?? 0)];
  return [];
}

/** The eight 16-bit groups of a valid IPv6 address (with `::` expanded and a trailing dotted quad converted). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const quad = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(2).map(Number) as [number, number, number, number];
    text = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - h.length - t.length;
  if (fill < 0) return undefined;
  const groups = [...h, ...new Array<string>(fill).fill('0'), ...t].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
