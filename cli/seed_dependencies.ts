/**
 * What a project's probes and heartbeats depend on (`depends_on`, probe ids of the same
 * project), in seed files and exports. The dependencies are set after every probe and heartbeat
 * of the project is there, so an entry may name one listed after it (or a heartbeat, which is
 * created after the probes): the service refuses an id it does not know yet. An id is a fixed
 * function of a probe's method and URL (a heartbeat's of its name), so the same file names the
 * same probes on every instance.
 *
 * @module
 */
import type { ProbeClient } from "@probe/client";
import { isDeepStrictEqual } from "node:util";

/** One probe or heartbeat whose dependencies a seed brings in line. */
export interface Dependent {
  /** The probe's URL or the heartbeat's name, as its step names it. */
  target: string;
  /** A probe's id, to update it; absent for a heartbeat (updated by name). */
  probeId?: string;
  /** What the file says; absent: none. */
  want: readonly string[] | undefined;
  /** What the service holds now (none after a create or a rewrite). */
  have: readonly string[] | undefined;
}

const sorted = (ids: readonly string[] | undefined) => [...new Set(ids ?? [])].sort();

/**
 * Sets what each dependent depends on where the file differs from the service; answers the
 * targets whose dependencies changed (or, dry, would). Absent in the file is none, as an export
 * writes it.
 */
export async function seedDependencies(
  client: ProbeClient,
  project: string,
  dependents: Dependent[],
  dryRun: boolean,
): Promise<Set<string>> {
  const changed = new Set<string>();
  for (const { target, probeId, want, have } of dependents) {
    const depends_on = sorted(want);
    if (isDeepStrictEqual(depends_on, sorted(have))) continue;
    changed.add(target);
    if (dryRun) continue;
    if (probeId === undefined) {
      await client.heartbeats.update({ project, name: target, depends_on });
    } else await client.probes.update({ project, probeId, depends_on });
  }
  return changed;
}

/** A read's `depends_on` as an export writes it: sorted, left out when none. */
export const exportDependsOn = (ids: readonly string[] | undefined) =>
  ids && ids.length > 0 ? { depends_on: sorted(ids) } : {};
