/**
 * What the caller's key may see of stored credentials, decided once from its scope: a write key
 * sees what is stored; a read-only key sees it through the presenter of `server/domain/secrets.ts`.
 * Every query answering a probe's URL or headers, or a target's URL, goes through here.
 *
 * @module
 */
import { probeForReader, targetForReader } from "../domain/secrets.ts";
import type { Context } from "./context.ts";

/** The presenter for this call's key. */
export function shown(ctx: Context) {
  const reader = ctx.scope !== "write";
  const secretHeaders = ctx.secretHeaders ?? [];
  return {
    /** A probe, or a row naming a probe by URL. */
    probe<T extends { url: string; headers?: Record<string, string> }>(probe: T): T {
      return reader ? probeForReader(probe, secretHeaders) : probe;
    },
    target<T extends { url: string | null }>(target: T): T {
      return reader ? targetForReader(target) : target;
    },
  };
}
