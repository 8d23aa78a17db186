/**
 * The service's secrets handed out once (stored API keys, location tokens, session tokens): 32
 * random bytes as base64url after a prefix that says what the secret is, stored only as their
 * SHA-256 digest.
 */
import { createHash, randomBytes } from "node:crypto";

/** The SHA-256 digest, hex, of a token or key. */
export const sha256Hex = (value: string) => createHash("sha256").update(value).digest("hex");

/** A new secret starting with `prefix`, and its digest. */
export function newSecret(prefix: string): { secret: string; digest: string } {
  const secret = prefix + randomBytes(32).toString("base64url");
  return { secret, digest: sha256Hex(secret) };
}
