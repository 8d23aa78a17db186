/**
 * `dns://resolver[:port]/name?type=A`: one query for `name` to the resolver named (UDP, TCP when
 * the answer is truncated); up when it answers records. `expect.body` judges the answers as text
 * (one record per line) and `expect.json` as a JSON array of strings (docs/kinds.md).
 *
 * @module
 */
import { hostAndPort } from "./host.ts";
import type { KindRules } from "./kind.ts";

/** The record types a DNS probe may ask for. */
export const DNS_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT", "NS"] as const;
export type DnsType = (typeof DNS_TYPES)[number];

/** A domain name as queried: labels of letters, digits, `-` and `_`, at most 253 characters. */
const NAME =
  /^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

/** The parts of a stored `dns://` URL. */
export function dnsQueryOf(
  url: string,
): { host: string; port: number; name: string; type: DnsType } {
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: Number(u.port || 53),
    name: u.pathname.slice(1),
    type: (u.searchParams.get("type") ?? "A") as DnsType,
  };
}

/**
 * The name a path names, as queried: percent-decoding undone, lower case, without the root's
 * trailing dot, and an internationalised name in its ASCII form (`bücher.example` is
 * `xn--bcher-kva.example`), as a browser would look it up. Null when it cannot be read.
 */
function domainOf(path: string): string | null {
  let name: string;
  try {
    name = decodeURIComponent(path).replace(/\.$/, "");
  } catch {
    return null;
  }
  // deno-lint-ignore no-control-regex
  if (/^[\x00-\x7f]*$/.test(name)) return name.toLowerCase();
  return URL.canParse(`http://${name}/`) ? new URL(`http://${name}/`).hostname : null;
}

export const dnsRules: KindRules = {
  name: "dns",
  schemes: ["dns:"],
  form: "dns://resolver[:port]/name?type=A|AAAA|CNAME|MX|TXT|NS",
  normalize(url) {
    const where = hostAndPort(url, { defaultPort: 53 });
    if ("problem" in where) return where;
    const name = domainOf(url.pathname.slice(1));
    if (name === null || !NAME.test(name)) {
      return {
        problem: "must name a domain to query after the resolver: dns://resolver/example.com",
      };
    }
    const params = [...url.searchParams.keys()];
    if (params.some((k) => k !== "type") || url.searchParams.getAll("type").length > 1) {
      return { problem: "takes one query parameter, type" };
    }
    const type = (url.searchParams.get("type") ?? "A").toUpperCase();
    if (!(DNS_TYPES as readonly string[]).includes(type)) {
      return { problem: `type must be one of ${DNS_TYPES.join(", ")}` };
    }
    const port = where.port === 53 ? "" : `:${where.port}`;
    return `dns://${where.host}${port}/${name}?type=${type}`;
  },
  urlHoldsSecrets: false,
  uses: { method: false, headers: false, body: false },
  expects: ["body", "json"],
};
