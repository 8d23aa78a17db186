/**
 * The kinds of probe the service runs, one file each, registered here. A new kind is its file
 * here (its URL form and rules), its runner file in `server/runner/kinds/`, its test, and a row
 * in docs/kinds.md.
 *
 * @module
 */
import type { ProbeExpect } from "../expect.ts";
import type { KindDefinition, KindField, KindProblem, KindRules } from "./kind.ts";
import { httpRules } from "./http.ts";
import { tcpRules } from "./tcp.ts";
import { tlsRules } from "./tls.ts";
import { dnsRules } from "./dns.ts";

export type { KindDefinition, KindField, KindProblem, KindRules } from "./kind.ts";
export { DNS_TYPES, dnsQueryOf, type DnsType } from "./dns.ts";

/** Every kind, in the order documents list them. */
export const KINDS: readonly KindRules[] = [httpRules, tcpRules, tlsRules, dnsRules];

/** The kind a URL's scheme names; null for a scheme no kind runs (or no URL). */
export function kindOf(url: string): KindRules | null {
  const colon = url.indexOf(":");
  if (colon < 0) return null;
  const scheme = url.slice(0, colon + 1).toLowerCase();
  return KINDS.find((k) => k.schemes.includes(scheme)) ?? null;
}

/** The URL forms the service runs, for messages: "http(s)://…, tcp://host:port, …". */
export const KIND_FORMS = KINDS.map((k) => k.form).join(", ");

/**
 * A probe URL as stored: absolute, of a kind the service runs, normalised by its kind; or what
 * is wrong with it.
 */
export function normalizeProbeUrl(input: string): string | { problem: string } {
  if (!URL.canParse(input)) {
    return { problem: `must be an absolute URL of one of the forms ${KIND_FORMS}` };
  }
  const url = new URL(input);
  const kind = kindOf(url.protocol);
  if (!kind) return { problem: `must be an absolute URL of one of the forms ${KIND_FORMS}` };
  return kind.normalize(url);
}

/**
 * Whether a definition uses a field: the values a probe's read shows for a field its kind has no
 * use for (`method` GET, `headers` {}, `body` null) are no use, so a read can be written back.
 */
function used(field: KindField, d: KindDefinition): boolean {
  const value = d[field];
  if (value === undefined || value === null) return false;
  if (field === "method") return value !== "GET";
  if (field === "headers") return Object.keys(value as object).length > 0;
  return true;
}

/**
 * What a definition asks that its kind cannot do: a field it has no use for, an `expect` check it
 * cannot make.
 */
export function kindProblems(d: KindDefinition): KindProblem[] {
  const kind = kindOf(d.url);
  if (!kind) return [];
  const problems: KindProblem[] = [];
  for (const field of ["method", "headers", "body"] as const) {
    if (!kind.uses[field] && used(field, d)) {
      problems.push({ path: [field], message: `${kind.form} probes take no ${field}` });
    }
  }
  for (const key of Object.keys(d.expect ?? {}) as (keyof ProbeExpect)[]) {
    if (d.expect?.[key] !== undefined && !kind.expects.includes(key)) {
      problems.push({
        path: ["expect", key],
        message: `${kind.form} probes cannot check ${key}`,
      });
    }
  }
  if (kind.problems) problems.push(...kind.problems(d));
  return problems;
}
