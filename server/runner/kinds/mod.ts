/**
 * The runner's kinds, one file each, registered here by their URL schemes (`shared/kinds/` has
 * the interface's half of each).
 *
 * @module
 */
import type { KindExecutor } from "./kind.ts";
import { httpExecutor } from "./http.ts";
import { dnsExecutor } from "./dns.ts";
import { tcpExecutor } from "./tcp.ts";
import { tlsExecutor } from "./tls.ts";

const EXECUTORS: readonly KindExecutor[] = [httpExecutor, tcpExecutor, dnsExecutor, tlsExecutor];

const BY_SCHEME = new Map(EXECUTORS.flatMap((k) => k.schemes.map((s) => [s, k] as const)));

/**
 * The executor of a probe's kind. A stored URL always names one (the interface refuses others);
 * anything else is judged as HTTP, which refuses what it cannot request.
 */
export function executorFor(url: string): KindExecutor {
  const colon = url.indexOf(":");
  return BY_SCHEME.get(url.slice(0, colon + 1).toLowerCase()) ?? httpExecutor;
}
