/**
 * Which addresses an outbound request may reach (server-side request forgery defence). The
 * check is made on the address actually connected to, after name resolution, and again on every
 * redirect hop: see `outbound.ts`, which connects only to an address this module passed.
 *
 * @module
 */
import { lookup } from "node:dns/promises";
import ipaddr from "ipaddr.js";
import { TtlCache } from "../ttl_cache.ts";

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

/** The ranges a request may not reach unless `PROBE_ALLOW_NETWORKS` opens them. */
export const FORBIDDEN_NETWORKS: readonly { cidr: string; name: string }[] = [
  { cidr: "0.0.0.0/8", name: "this network" },
  { cidr: "10.0.0.0/8", name: "private" },
  { cidr: "100.64.0.0/10", name: "carrier-grade NAT" },
  { cidr: "127.0.0.0/8", name: "loopback" },
  { cidr: "169.254.0.0/16", name: "link-local" },
  { cidr: "172.16.0.0/12", name: "private" },
  { cidr: "192.0.0.0/24", name: "IETF protocol assignments" },
  { cidr: "192.168.0.0/16", name: "private" },
  { cidr: "198.18.0.0/15", name: "benchmarking" },
  { cidr: "224.0.0.0/4", name: "multicast" },
  { cidr: "240.0.0.0/4", name: "reserved or broadcast" },
  { cidr: "::/128", name: "unspecified" },
  { cidr: "::1/128", name: "loopback" },
  { cidr: "fe80::/10", name: "link-local" },
  { cidr: "fec0::/10", name: "site-local" },
  { cidr: "fc00::/7", name: "unique-local" },
  { cidr: "ff00::/8", name: "multicast" },
  // RFC 8215: a NAT64 prefix for one operator's own network, with the IPv4 address at a place
  // that network chooses (RFC 6052 allows /48 to /96), so the address inside cannot be judged.
  { cidr: "64:ff9b:1::/48", name: "local-use NAT64" },
  // Teredo (RFC 4380): reached through whatever relay the host's routing picks, and the IPv4
  // address inside is obfuscated; nothing a probe needs, so refused as a whole.
  { cidr: "2001::/32", name: "Teredo" },
];

const FORBIDDEN: { cidr: Cidr; name: string }[] = FORBIDDEN_NETWORKS.map((n) => ({
  cidr: ipaddr.parseCIDR(n.cidr),
  name: n.name,
}));

/**
 * IPv6 forms that carry an IPv4 address, which is what they reach, so they are judged by the
 * IPv4 rules on that address: mapped, translated (RFC 6145), compatible, NAT64, 6to4.
 */
const EMBEDDING: { cidr: Cidr; extract: (a: ipaddr.IPv6) => ipaddr.IPv4 }[] = [
  { cidr: ipaddr.parseCIDR("::ffff:0:0/96"), extract: (a) => a.toIPv4Address() },
  { cidr: ipaddr.parseCIDR("::ffff:0:0:0/96"), extract: (a) => lastFourBytes(a) },
  { cidr: ipaddr.parseCIDR("::/96"), extract: (a) => lastFourBytes(a) },
  { cidr: ipaddr.parseCIDR("64:ff9b::/96"), extract: (a) => lastFourBytes(a) },
  {
    cidr: ipaddr.parseCIDR("2002::/16"),
    extract: (a) => new ipaddr.IPv4(a.toByteArray().slice(2, 6)),
  },
];

function lastFourBytes(a: ipaddr.IPv6): ipaddr.IPv4 {
  return new ipaddr.IPv4(a.toByteArray().slice(12, 16));
}

/** The ranges opened by configuration; built once by `createNetworkPolicy`. */
export interface NetworkPolicy {
  readonly allow: readonly Cidr[];
  /** The CIDRs as configured, for logs. */
  readonly allowed: readonly string[];
}

/**
 * Parses a comma-separated list of CIDRs (`127.0.0.0/8, ::1/128`); a bare address counts as a
 * single host. Throws an Error naming the first entry that is not one.
 */
export function parseNetworks(list: string): string[] {
  const entries = list.split(",").map((e) => e.trim()).filter((e) => e.length > 0);
  for (const entry of entries) {
    if (!parseCidr(entry)) throw new Error(`"${entry}" is not a CIDR such as 10.0.0.0/8`);
  }
  return entries;
}

function parseCidr(entry: string): Cidr | null {
  try {
    if (entry.includes("/")) return ipaddr.parseCIDR(entry);
    const address = ipaddr.parse(entry);
    return [address, address.kind() === "ipv4" ? 32 : 128];
  } catch {
    return null;
  }
}

/** A policy that opens the given CIDRs (already validated by `parseNetworks`). */
export function createNetworkPolicy(allowed: readonly string[] = []): NetworkPolicy {
  return {
    allowed: [...allowed],
    allow: allowed.map((entry) => {
      const cidr = parseCidr(entry);
      if (!cidr) throw new Error(`"${entry}" is not a CIDR such as 10.0.0.0/8`);
      return cidr;
    }),
  };
}

/** The verdict on one address. `address` is its canonical text form. */
export type AddressVerdict =
  | { allowed: true; address: string }
  | { allowed: false; address: string; range: string };

function inAny(address: Address, cidrs: readonly Cidr[]): boolean {
  return cidrs.some((cidr) => address.kind() === cidr[0].kind() && address.match(cidr));
}

function forbiddenRange(address: Address): string | null {
  for (const { cidr, name } of FORBIDDEN) {
    if (address.kind() === cidr[0].kind() && address.match(cidr)) return name;
  }
  return null;
}

/**
 * Decides whether an address literal may be connected to. Pure: no resolution, no connection.
 * Accepts the forms a URL host may take (`0x7f.1`, `2130706433`, `[::1]`); a string that is not
 * an address at all is refused.
 *
 * @example
 * ```ts
 * import { checkAddress, createNetworkPolicy } from "./network_policy.ts";
 * checkAddress("169.254.169.254", createNetworkPolicy()); // { allowed: false, range: "link-local", … }
 * ```
 */
export function checkAddress(literal: string, policy: NetworkPolicy): AddressVerdict {
  const text = literal.startsWith("[") && literal.endsWith("]") ? literal.slice(1, -1) : literal;
  let address: Address;
  try {
    address = ipaddr.parse(text);
  } catch {
    return { allowed: false, address: literal, range: "not an IP address" };
  }
  const canonical = address.toString();
  if (inAny(address, policy.allow)) return { allowed: true, address: canonical };
  const range = forbiddenRange(address);
  if (range) return { allowed: false, address: canonical, range };
  if (address.kind() === "ipv6") {
    const v6 = address as ipaddr.IPv6;
    for (const { cidr, extract } of EMBEDDING) {
      if (!v6.match(cidr)) continue;
      const inner = extract(v6);
      if (inAny(inner, policy.allow)) return { allowed: true, address: canonical };
      const innerRange = forbiddenRange(inner);
      if (innerRange) {
        return { allowed: false, address: canonical, range: `${innerRange} (as IPv6)` };
      }
    }
  }
  return { allowed: true, address: canonical };
}

/**
 * How many verdicts (and host forms) `checkHost` keeps. A verdict is a pure function of the
 * address and the policy, so a kept one is the verdict the policy gives on this run too; parsing
 * the address with `ipaddr.js` again cost a few percent of a loopback check's CPU.
 */
const KEPT_VERDICTS = 10_000;

/** Kept verdicts per policy, by address literal; emptied when full. */
const verdicts = new WeakMap<NetworkPolicy, Map<string, AddressVerdict>>();
/** Whether a host is an address literal (`ipaddr.isValid`), by host; emptied when full. */
const literals = new Map<string, boolean>();

function keep<T>(map: Map<string, T>, key: string, value: T): T {
  if (map.size >= KEPT_VERDICTS) map.clear();
  map.set(key, value);
  return value;
}

/** `checkAddress`, its verdict kept for the next run to the same address under `policy`. */
function judged(literal: string, policy: NetworkPolicy): AddressVerdict {
  let kept = verdicts.get(policy);
  if (!kept) verdicts.set(policy, kept = new Map());
  return kept.get(literal) ?? keep(kept, literal, Object.freeze(checkAddress(literal, policy)));
}

function isAddressLiteral(host: string): boolean {
  return literals.get(host) ?? keep(literals, host, ipaddr.isValid(host));
}

/** Resolves a host name to its IP addresses (A and AAAA); rejects when there are none. */
export type Resolver = (hostname: string) => Promise<string[]>;

/**
 * The system resolver (getaddrinfo, so `/etc/hosts` counts as it would for any client): every
 * address of the name, IPv4 first.
 */
export const systemResolver: Resolver = async (hostname) => {
  const found = await lookup(hostname, { all: true });
  return found.sort((a, b) => a.family - b.family).map((f) => f.address);
};

/** How long `reusingResolver` keeps a name's addresses: a second, far under any DNS TTL. */
export const NAME_REUSE_MS = 1_000;

/**
 * `resolve` (the system's by default) with each name's answer reused for `ttlMs`, and lookups
 * of one name at once shared: the probes of one host, run within the same second, cost one
 * lookup (getaddrinfo took some 0.1 ms of CPU a call, more than a TCP check's own work). Only
 * the lookup is reused: every run still checks every address against the policy and connects
 * to the one it passed. A failed lookup is not kept; at most `maxNames` names are.
 */
export function reusingResolver(
  resolve: Resolver = systemResolver,
  { ttlMs = NAME_REUSE_MS, maxNames = 10_000, now }: {
    ttlMs?: number;
    maxNames?: number;
    now?: () => number;
  } = {},
): Resolver {
  const answers = new TtlCache<string[]>({ ttlMs, maxEntries: maxNames, now });
  return (hostname) => answers.get(hostname.toLowerCase(), 0, () => resolve(hostname));
}

/** Where a URL may be sent: the one checked address to connect to, or why not. */
export type TargetCheck =
  | { ok: true; hostname: string; address: string; family: 4 | 6 }
  | { ok: false; kind: "blocked"; address: string; reason: string }
  | { ok: false; kind: "dns"; reason: string }
  | { ok: false; kind: "invalid"; reason: string };

/** The host of a URL without IPv6 brackets; WHATWG parsing already made IPv4 forms dotted. */
function bareHost(url: URL): string {
  const h = url.hostname;
  return h.startsWith("[") ? h.slice(1, -1) : h;
}

/**
 * Resolves a URL's host and checks every address it resolves to: one forbidden address refuses
 * the whole name (a name pointing both outside and inside is not trusted). The caller must
 * connect to `address` and to nothing else, so a second resolution cannot change the answer.
 */
export function checkTarget(
  url: URL,
  options: { policy: NetworkPolicy; resolve?: Resolver },
): Promise<TargetCheck> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Promise.resolve({
      ok: false,
      kind: "invalid",
      reason: `unsupported scheme ${url.protocol}`,
    });
  }
  return checkHost(bareHost(url), options);
}

/**
 * `checkTarget` for a host name or address alone (IPv6 without brackets): what every kind of
 * probe that connects somewhere checks before it connects, to the one address answered.
 */
export async function checkHost(
  host: string,
  { policy, resolve = systemResolver }: { policy: NetworkPolicy; resolve?: Resolver },
): Promise<TargetCheck> {
  let addresses: string[];
  if (isAddressLiteral(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await resolve(host.endsWith(".") ? host.slice(0, -1) : host);
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      return {
        ok: false,
        kind: "dns",
        reason: typeof code === "string" ? `DNS: ${code}` : "DNS: lookup failed",
      };
    }
    if (addresses.length === 0) return { ok: false, kind: "dns", reason: "DNS: no address" };
  }
  let first: { address: string; family: 4 | 6 } | undefined;
  for (const literal of addresses) {
    const verdict = judged(literal, policy);
    if (!verdict.allowed) {
      return {
        ok: false,
        kind: "blocked",
        address: verdict.address,
        // The variable that opens it is named: the first thing a new user needs to know.
        reason: `blocked: ${verdict.address} is ${verdict.range} (not in PROBE_ALLOW_NETWORKS)`,
      };
    }
    first ??= { address: verdict.address, family: verdict.address.includes(":") ? 6 : 4 };
  }
  return { ok: true, hostname: host, ...first! };
}

/**
 * Checks an outbound URL (a probe target, a webhook) against the policy, resolving its host.
 * A check alone does not stop DNS rebinding: send through `outboundRequest` (outbound.ts),
 * which connects to the address checked here.
 */
export function checkOutboundUrl(
  url: string,
  options: { policy: NetworkPolicy; resolve?: Resolver },
): Promise<TargetCheck> {
  if (!URL.canParse(url)) {
    return Promise.resolve({ ok: false, kind: "invalid", reason: "not a URL" });
  }
  return checkTarget(new URL(url), options);
}

/**
 * The probes' network policy as an outbound check for other senders (the webhook channel).
 * A name that does not resolve is refused too: there is no checked address to send to.
 */
export function outboundCheck(
  policy: NetworkPolicy,
  resolve?: Resolver,
): (url: URL) => Promise<{ allowed: boolean; reason?: string }> {
  return async (url) => {
    const check = await checkOutboundUrl(url.href, { policy, resolve });
    return check.ok ? { allowed: true } : { allowed: false, reason: check.reason };
  };
}
