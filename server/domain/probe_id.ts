import { createHash } from "node:crypto";

/** A probe's public id: a fixed function of its normalised method and URL (16 hex digits). */
export function probeIdOf(method: string, url: string): string {
  return createHash("sha256").update(`${method} ${url}`).digest("hex").slice(0, 16);
}
