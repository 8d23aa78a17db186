/**
 * What changes to probes and projects mean for their states and incidents: a probe that now
 * checks something else (new URL or method) starts again from `unknown` and its open incident
 * is resolved as `changed`; the probes of a disabled project are not checked, so they go back to
 * `unknown` and their incidents are resolved as `disabled`; a deleted probe's incidents are
 * resolved as `deleted`. None of these notifies anyone, but for the incidents a dependency kept
 * untold that are told once it no longer does. Call inside the change's transaction.
 *
 * @module
 */
import type { Db } from "../storage/database.ts";
import { dependenciesRewritten, resolveQuietly } from "./incidents.ts";
import { resetStates } from "./states.ts";
import { forgetVerdicts } from "./verdicts.ts";

export async function probeChanged(trx: Db, key: string, at = new Date()): Promise<void> {
  await resetStates(trx, { keys: [key] }, at);
  await resolveQuietly(trx, { keys: [key] }, "changed", at);
}

export async function projectDisabled(trx: Db, project: string, at = new Date()): Promise<void> {
  await resetStates(trx, { project }, at);
  await resolveQuietly(trx, { project }, "disabled", at);
}

export async function probesDeleted(
  trx: Db,
  where: { keys: readonly string[] } | { project: string },
  at = new Date(),
): Promise<void> {
  await resolveQuietly(trx, where, "deleted", at);
  await forgetVerdicts(trx, where);
}

/**
 * What a probe depends on was rewritten: an open incident one of its old dependencies kept
 * untold is told now, unless a dependency it still has (or just gained) is down.
 */
export async function dependenciesChanged(trx: Db, key: string, at = new Date()): Promise<void> {
  await dependenciesRewritten(trx, key, at);
}
