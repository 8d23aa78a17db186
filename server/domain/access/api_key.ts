import { randomBytes } from "node:crypto";
import { DEFAULT_DATA_DIR, DEFAULT_SERVICE_URL } from "@probe/shared";
import type { Logger } from "../../base/log.ts";
import type { Principal } from "../principal.ts";

/**
 * What a key may do: `write` keys may call everything, `read` keys only the queries (GETs), and a
 * location token (`location`) only the runner protocol of its location (docs/locations.md).
 */
export type Scope = "read" | "write" | "location";

/** The names the keys from the environment go by (in `ctx.principal`, the keys list, the log). */
export const CONFIGURED_KEY_NAMES = {
  admin: "SERVICE_API_KEY",
  viewer: "SERVICE_API_KEYS_READONLY",
} as const;

/** What a principal's role lets its calls do, as the scope the edge and procedures read. */
export function scopeOf(principal: Principal): Scope {
  if (principal.source === "location_token") return "location";
  return principal.role === "viewer" ? "read" : "write";
}

/**
 * The principals of the keys from the environment: `SERVICE_API_KEY` (and the generated key) as
 * admin, `SERVICE_API_KEYS_READONLY` as viewer, each seeing every project. A list's keys past
 * the first are named by their place (`SERVICE_API_KEY[2]`).
 */
export function configuredPrincipals(
  keys: readonly string[],
  readOnlyKeys: readonly string[] = [],
): { key: string; principal: Principal }[] {
  const of = (list: readonly string[], role: "admin" | "viewer") =>
    list.map((key, i) => ({
      key,
      principal: {
        source: "configured_key" as const,
        name: i === 0 ? CONFIGURED_KEY_NAMES[role] : `${CONFIGURED_KEY_NAMES[role]}[${i + 1}]`,
        role,
        projects: null,
      },
    }));
  return [...of(keys, "admin"), ...of(readOnlyKeys, "viewer")];
}

/**
 * Whether `presented` is `key`, in a time that depends on the key's length alone: every character
 * is compared whatever the first difference, and a text of another length is compared as the key
 * itself, and fails. A tenth of what a SHA-256 digest and `timingSafeEqual` cost (some 8 µs of a
 * request's CPU).
 */
function sameKey(key: string, presented: string): boolean {
  const other = presented.length === key.length ? presented : key;
  let difference = presented.length ^ key.length;
  for (let i = 0; i < key.length; i++) difference |= key.charCodeAt(i) ^ other.charCodeAt(i);
  return difference === 0;
}

/**
 * Returns a check for the `X-Service-Api-Key` header against the keys from the environment: the
 * principal of the key presented, or null when it is none of them. Every key is compared, each in
 * constant time (`sameKey`), so timing says nothing about the keys nor about which list holds one.
 */
export function createPrincipalCheck(
  keys: readonly string[],
  readOnlyKeys: readonly string[] = [],
): (presented: string | null) => Principal | null {
  const configured = configuredPrincipals(keys, readOnlyKeys);
  return (presented) => {
    if (presented === null) return null;
    let match: Principal | null = null;
    for (const { key, principal } of configured) if (sameKey(key, presented)) match = principal;
    return match;
  };
}

/** The scope of the key presented, or null (`createPrincipalCheck`): for `/metrics` alone. */
export function createKeyCheck(
  keys: readonly string[],
  readOnlyKeys: readonly string[] = [],
): (presented: string | null) => Scope | null {
  const check = createPrincipalCheck(keys, readOnlyKeys);
  return (presented) => {
    const principal = check(presented);
    return principal && scopeOf(principal);
  };
}

/** The service's keys, and the key generated on this start when there was none. */
export interface ApiKeys {
  keys: string[];
  /** Announced once the port is bound (`firstStartNote`); never logged. */
  generated?: { key: string; path: string };
}

/**
 * The keys from configuration, or else the one kept in `<dataDir>/api-key`, generated (mode
 * 0600) on first start so that the service runs with no configuration.
 */
export async function resolveApiKeys(
  { configured, dataDir, log }: {
    configured: string[] | undefined;
    dataDir: string;
    log: Logger;
  },
): Promise<ApiKeys> {
  if (configured) return { keys: configured };
  const path = `${dataDir}/api-key`;
  try {
    const stored = (await Deno.readTextFile(path)).trim();
    if (stored) {
      // Every later start says where the key is (never the key itself).
      log.info("using the API key saved in DATA_DIR (SERVICE_API_KEY is not set)", { path });
      return { keys: [stored] };
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const key = randomBytes(32).toString("base64url");
  await Deno.mkdir(dataDir, { recursive: true });
  await Deno.writeTextFile(path, `${key}\n`, { mode: 0o600 });
  await Deno.chmod(path, 0o600);
  log.info("generated an API key", { path });
  return { keys: [key], generated: { key, path } };
}

/**
 * What the start that generated the key prints, once the service listens at `url`: the key, and
 * how to use it. The CLI and `deno task backup` look for the service and the key where the
 * service is by default (`shared/operator.ts`): where it is elsewhere, their commands carry
 * `PROBE_SERVICE_URL` and `DATA_DIR`.
 */
export function firstStartNote(
  { key, path, url, dataDir, networksOpened = false }: {
    key: string;
    path: string;
    url: string;
    dataDir: string;
    /** Whether `PROBE_ALLOW_NETWORKS` opens some ranges already: then no word of it. */
    networksOpened?: boolean;
  },
): string {
  const env = [
    url === DEFAULT_SERVICE_URL ? "" : `PROBE_SERVICE_URL=${url} `,
    dataDir === DEFAULT_DATA_DIR ? "" : `DATA_DIR=${dataDir} `,
  ].join("");
  return `\nSERVICE_API_KEY was not set, so a key was generated and saved in ${path}:\n\n  ${key}\n\n` +
    `Try it:\n  curl -H 'X-Service-Api-Key: ${key}' ${url}/api/v1/projects\n\n` +
    `  Dashboard:      ${url}/ (it asks for this key once)\n` +
    `  API reference:  ${url}/docs\n` +
    `  CLI:            ${env}deno task cli projects list   (reads the key from ${path})\n` +
    `  Metrics:        ${url}/metrics   (Prometheus; a SERVICE_API_KEYS_READONLY key will do)\n` +
    `  Backups:        ${env}deno task backup   (docs/backups.md)\n` +
    (networksOpened ? "" : "\nProbes may not reach loopback or private addresses until " +
      "PROBE_ALLOW_NETWORKS opens them\n(for example PROBE_ALLOW_NETWORKS=127.0.0.0/8 to watch " +
      "services on this machine).\n");
}
