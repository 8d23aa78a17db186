/**
 * The address a request comes from, for limits kept per caller. It is the TCP peer, unless the
 * peer is one of `TRUSTED_PROXIES`: then `X-Forwarded-For` is read from the right, passing over
 * the trusted proxies, and the first other address is the client's. Addresses a caller could
 * forge (anything left of it) are never believed.
 *
 * @module
 */
import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

function parse(text: string): Address | null {
  const trimmed = text.trim().replace(/^\[(.*)\]$/, "$1");
  if (!ipaddr.isValid(trimmed)) return null;
  const address = ipaddr.parse(trimmed);
  // An IPv4 peer on a dual-stack socket arrives as ::ffff:a.b.c.d.
  return address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;
}

/** Parses `TRUSTED_PROXIES` entries: addresses or CIDR ranges; throws naming a bad entry. */
export function parseTrustedProxies(list: string): [Address, number][] {
  const range = (entry: string): [Address, number] => {
    if (entry.includes("/")) return ipaddr.parseCIDR(entry);
    const address = ipaddr.parse(entry);
    return [address, address.kind() === "ipv4" ? 32 : 128];
  };
  return list.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)
    .map((entry) => {
      try {
        return range(entry);
      } catch {
        throw new Error(`"${entry}" is not an address or a CIDR range`);
      }
    });
}

/** Returns the function that names a request's client from its peer address and headers. */
export function createClientAddress(
  trusted: readonly [Address, number][],
): (peer: string | undefined, headers: Headers) => string {
  const isTrusted = (address: Address) =>
    trusted.some(([range, bits]) => address.kind() === range.kind() && address.match(range, bits));
  return (peer, headers) => {
    const address = peer === undefined ? null : parse(peer);
    if (!address) return peer ?? "unknown";
    if (!isTrusted(address)) return address.toString();
    const forwarded = headers.get("x-forwarded-for")?.split(",") ?? [];
    for (let i = forwarded.length - 1; i >= 0; i--) {
      const hop = parse(forwarded[i]);
      if (!hop) return forwarded[i].trim().slice(0, 64); // not an address: as sent, bounded
      if (!isTrusted(hop)) return hop.toString();
    }
    return address.toString();
  };
}
