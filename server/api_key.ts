import { randomBytes } from "node:crypto";
import type { Logger } from "./log.ts";

/**
 * Returns a check for the `X-Service-Api-Key` header against any of the keys. The presented
 * key is compared with every key over the same number of bytes whatever it holds, so timing
 * says nothing about the keys, their lengths included. (A byte loop, rather than a digest each
 * time: this runs on every request.)
 */
export function createKeyCheck(keys: readonly string[]): (presented: string | null) => boolean {
  const encoder = new TextEncoder();
  const encoded = keys.map((k) => encoder.encode(k));
  const span = Math.max(MAX_COMPARED_BYTES, ...encoded.map((k) => k.length));
  // Each key in a zero-padded slot of `span` bytes; the presented one is written the same way.
  const slots = encoded.map((k) => {
    const slot = new Uint8Array(span);
    slot.set(k);
    return { slot, length: k.length };
  });
  const candidate = new Uint8Array(span);
  return (presented) => {
    if (presented === null) return false;
    candidate.fill(0);
    const { read, written } = encoder.encodeInto(presented, candidate);
    // Too long to fit: compared all the same, and refused below.
    const length = read === presented.length ? written : -1;
    let match = 0;
    for (const { slot, length: keyLength } of slots) {
      let diff = length ^ keyLength;
      for (let i = 0; i < span; i++) diff |= slot[i] ^ candidate[i];
      match |= diff === 0 ? 1 : 0;
    }
    return match === 1;
  };
}

/** Keys up to this long are compared without their length showing in the timing. */
const MAX_COMPARED_BYTES = 256;

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
