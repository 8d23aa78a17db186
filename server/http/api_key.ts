import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Logger } from "../log.ts";

const digest = (key: string) => createHash("sha256").update(key).digest();

/**
 * Returns a check for the `X-Service-Api-Key` header against any of the keys. SHA-256 digests
 * (all 32 bytes, whatever the key's length) are compared with `timingSafeEqual`, and every key
 * is compared, so timing says nothing about the keys. The digest costs a few microseconds.
 */
export function createKeyCheck(keys: readonly string[]): (presented: string | null) => boolean {
  const digests = keys.map(digest);
  return (presented) => {
    if (presented === null) return false;
    const candidate = digest(presented);
    let match = false;
    for (const d of digests) match = timingSafeEqual(d, candidate) || match;
    return match;
  };
}

/**
 * The keys from configuration, or else the one kept in `<dataDir>/api-key`, generated (mode
 * 0600) and printed once on first start so that the service runs with no configuration.
 */
export async function resolveApiKeys(
  { configured, dataDir, port, log }: {
    configured: string[] | undefined;
    dataDir: string;
    port: number;
    log: Logger;
  },
): Promise<string[]> {
  if (configured) return configured;
  const path = `${dataDir}/api-key`;
  try {
    const stored = (await Deno.readTextFile(path)).trim();
    if (stored) return [stored];
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const key = randomBytes(32).toString("base64url");
  await Deno.mkdir(dataDir, { recursive: true });
  await Deno.writeTextFile(path, `${key}\n`, { mode: 0o600 });
  await Deno.chmod(path, 0o600);
  log.info("generated an API key", { path });
  // Printed once, on the start that made it; never logged again.
  console.log(
    `\nSERVICE_API_KEY was not set, so a key was generated and saved in ${path}:\n\n  ${key}\n\n` +
      `Try it:\n  curl -H 'X-Service-Api-Key: ${key}' http://127.0.0.1:${port}/api/v1/projects\n`,
  );
  return [key];
}
