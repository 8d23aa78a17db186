/**
 * What the caller may see of stored credentials, decided once from its principal: a key that may
 * write sees what is stored; a viewer (a read-only key, a stored viewer key, a viewer's session)
 * sees it through the presenter of `server/domain/secrets.ts`. What every project shares (the
 * notification targets) a project-scoped principal sees as a viewer does, whatever its role.
 * Every query answering a probe's URL or headers, or a target's URL, goes through here.
 *
 * @module
 */
import { probeForReader, targetForReader } from "../domain/secrets.ts";
import type { Context } from "./context.ts";

/** Whether the caller sees stored secrets (probe headers, ping URLs' tokens) as they are. */
export function seesSecrets(ctx: Context): boolean {
  return ctx.scope === "write" && ctx.principal.role !== "viewer";
}

/** The presenter for this call's key. */
export function shown(ctx: Context) {
  const reader = !seesSecrets(ctx);
  const sharedReader = reader || ctx.principal.projects !== null;
  const secretHeaders = ctx.secretHeaders ?? [];
  return {
    /** A probe, or a row naming a probe by URL. */
    probe<T extends { url: string; headers?: Record<string, string> }>(probe: T): T {
      return reader ? probeForReader(probe, secretHeaders) : probe;
    },
    target<T extends { url: string | null }>(target: T): T {
      return sharedReader ? targetForReader(target) : target;
    },
  };
}
