/**
 * No server-side request forgery: the addresses a webhook may not reach
 * (loopback, private, link-local, CGNAT, multicast, unspecified,
 * documentation, benchmarking and other special-purpose ranges, IPv4 and
 * IPv6, IPv4-mapped IPv6 included), checked on the address a delivery
 * actually connects to: `lookup` is what the socket resolves its host
 * with, so a name that resolves to a public address when the subscription
 * is made and to a private one later (DNS rebinding) is still refused.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64 (reaches IPv4 addresses through a translator)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001::', 23], // IETF protocol assignments (Teredo among them)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (embeds an IPv4 address)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** Why a webhook may not connect to this IP address (undefined: it is public). Node's BlockList checks an IPv4-mapped IPv6 address against the IPv4 ranges. */
export function refusalOf(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6') ? `${address} is not a public address` : undefined;
}

/** A URL's host as an IP address, if it is one (IPv6 without its brackets). */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

/** A connection refused by the guard (its message names the address). */
export class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKREFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'RefusedAddressError';
  }
}

export class AddressGuard {
  constructor(private readonly allowPrivate: boolean) {}

  /** Why this address may not be connected to (always undefined when private networks are allowed). */
  refusal(address: string): string | undefined {
    return this.allowPrivate ? undefined : refusalOf(address);
  }

  /**
   * The socket's `lookup`: resolves as dns.lookup does, then keeps only
   * addresses that may be connected to; none left is an error (the
   * connection is never made). Node skips `lookup` for a literal address:
   * check those with `refusal` before connecting.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const allowed = addresses.filter((a) => this.refusal(a.address) === undefined);
      if (allowed.length === 0) {
        const why = addresses.map((a) => this.refusal(a.address)).join('; ') || 'no address';
        return callback(new RefusedAddressError(`refused: ${hostname} resolves to ${why}`), '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      const first = allowed[0]!;
      callback(null, first.address, first.family);
    });
  };

  /**
   * Why a subscription URL's host is refused at creation: a literal address
   * that may not be reached, or a name resolving to any such address.
   * A name that does not resolve now is not refused (its deliveries fail
   * and are recorded until it does).
   */
  async hostRefusal(hostname: string, timeoutMs = 3000): Promise<string | undefined> {
    if (this.allowPrivate) return undefined;
    const literal = literalAddress(hostname);
    if (literal !== undefined) return this.refusal(literal);
    const resolved = await new Promise<LookupAddress[]>((resolve) => {
      const timer = setTimeout(() => resolve([]), timeoutMs);
      dnsLookup(hostname, { all: true }, (error, addresses) => {
        clearTimeout(timer);
        resolve(error ? [] : addresses);
      });
    });
    const refusals = resolved.map((a) => this.refusal(a.address)).filter((r) => r !== undefined);
    return refusals.length > 0 ? `${hostname} resolves to ${refusals.join('; ')}` : undefined;
  }
}
