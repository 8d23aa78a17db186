/**
 * The runner's half of `dns://resolver[:port]/name?type=…`: one query to the resolver named, at
 * the address the network policy passed (UDP, again over TCP when the answer is truncated). Up
 * when it answers records of the type asked; the records, in their presentation form, are judged
 * by `expect` as text (one a line) and as a JSON array of strings (docs/kinds.md).
 *
 * @module
 */
import { dnsQueryOf, type DnsType } from "@probe/shared/rules";
import ipaddr from "ipaddr.js";
import { checkHost } from "../../base/outbound/network_policy.ts";
import type { ExecuteOptions, KindExecutor, ProbeTarget, RunResult } from "./kind.ts";
import { type DnsAnswer, type DnsQuestion, query } from "./dns_exchange.ts";
import { judgeAnswer, noAnswer } from "./verdict.ts";

type Record = NonNullable<DnsAnswer["answers"]>[number];

/** A domain name as shown: lower case, without the root's trailing dot. */
function nameOf(name: string): string {
  return name === "." || name === "" ? "." : name.toLowerCase().replace(/\.$/, "");
}

/** One record in its presentation form, or null for a record of another type. */
function present(record: Record, type: DnsType): string | null {
  if (record.type !== type || (record.class ?? "IN") !== "IN") return null;
  switch (record.type) {
    case "A":
    case "AAAA":
      // The canonical text form (RFC 5952 for IPv6), whatever the library wrote.
      return ipaddr.isValid(record.data) ? ipaddr.parse(record.data).toString() : null;
    case "CNAME":
    case "NS":
      return nameOf(record.data);
    case "MX":
      return `${record.data.preference ?? 0} ${nameOf(record.data.exchange)}`;
    case "TXT":
      return [record.data].flat().map((part) =>
        typeof part === "string" ? part : new TextDecoder().decode(part)
      ).join("");
    default:
      return null;
  }
}

const preference = (mx: string) => Number(mx.slice(0, mx.indexOf(" ")));

/**
 * The answer's records of the type asked, in presentation form and in an order that does not
 * change when a resolver rotates them: MX by preference, then name; the others as text.
 */
export function presentRecords(answer: DnsAnswer, type: DnsType): string[] {
  const records = (answer.answers ?? []).map((r) => present(r, type)).filter((r) => r !== null);
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return records.sort(
    type === "MX" ? (a, b) => preference(a) - preference(b) || byText(a, b) : byText,
  );
}

/** A response code that is not success, in words; the name asked is the probe's own. */
function failureOf(rcode: number, name: string): string {
  switch (rcode) {
    case 1:
      return "the resolver could not read the query (FORMERR)";
    case 2:
      return "the resolver failed (SERVFAIL)";
    case 3:
      return `no such name: ${name}`;
    case 4:
      return "the resolver does not answer such queries (NOTIMP)";
    case 5:
      return "the resolver refused the query (REFUSED)";
    default:
      return `the resolver answered with error code ${rcode}`;
  }
}

/** Resolves as `promise` does, or with null once `signal` aborts. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(null);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

async function executeDns(
  probe: ProbeTarget,
  options: ExecuteOptions,
): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>> {
  const now = options.now ?? Date.now;
  const elapsed = options.elapsed ?? (() => performance.now());
  const startedAt = new Date(now());
  const timeoutMs = probe.timeoutMs ?? options.timeoutMs;
  const { host, port, name, type } = dnsQueryOf(probe.url);
  const question: DnsQuestion = { name, type };
  const began = elapsed();
  const spent = () => Math.max(0, Math.round(elapsed() - began));
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const timedOut = (address: string | null) =>
    noAnswer("down", `no answer from the resolver within ${timeoutMs} ms`, {
      durationMs: spent(),
      address,
    });
  try {
    const check = await unlessAborted(checkHost(host, options), deadline.signal);
    if (check === null) return { startedAt, ...timedOut(null) };
    if (!check.ok) {
      const blocked = check.kind === "blocked";
      return {
        startedAt,
        ...noAnswer(
          blocked ? "blocked" : "down",
          blocked ? check.reason : `the resolver's name did not resolve (${check.reason})`,
          { durationMs: spent(), address: blocked ? check.address : null },
        ),
      };
    }
    const resolver = { address: check.address, port, family: check.family };
    const sent = elapsed();
    let result = await query("udp", resolver, question, deadline.signal);
    if (result.kind === "answer" && result.answer.flag_tc) {
      result = await query("tcp", resolver, question, deadline.signal);
    }
    if (result.kind === "aborted") return { startedAt, ...timedOut(check.address) };
    const where = { durationMs: Math.max(0, Math.round(elapsed() - sent)), address: check.address };
    if (result.kind === "failed") return { startedAt, ...noAnswer("down", result.reason, where) };
    const rcode = (result.answer.flags ?? 0) & 0x0f;
    if (rcode !== 0) return { startedAt, ...noAnswer("down", failureOf(rcode, name), where) };
    const records = presentRecords(result.answer, type);
    if (records.length === 0) {
      return { startedAt, ...noAnswer("down", `no ${type} records`, where) };
    }
    return {
      startedAt,
      ...judgeAnswer(
        { ...where, text: records.join("\n"), json: records, certificate: null },
        probe,
        startedAt.getTime(),
      ),
    };
  } finally {
    clearTimeout(timer);
  }
}

export const dnsExecutor: KindExecutor = {
  schemes: ["dns:"],
  execute: executeDns,
};
