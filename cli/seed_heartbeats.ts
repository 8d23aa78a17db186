/**
 * Heartbeats in seed files and exports: a project's `heartbeats` list holds each one's name and
 * timing, never its ping token nor its pings. A seed creates the heartbeats a service lacks
 * (each gets a new ping URL there), changes the timing of those that differ (their URLs stay),
 * and with `--prune` deletes those of a project with a `heartbeats` list that the list leaves
 * out. A backup (docs/backups.md), not an export, keeps the tokens.
 *
 * @module
 */
import type { Heartbeat, ProbeClient } from "@probe/client";
import { HEARTBEAT_DEFAULT_GRACE_SECONDS, heartbeatCreateInput } from "@probe/shared";
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { type Dependent, exportDependsOn } from "./seed_dependencies.ts";

/** A heartbeat as a seed file gives it: the creation's fields, its project the entry's. */
export const seedHeartbeat = heartbeatCreateInput.omit({ project: true });
export type SeedHeartbeat = z.infer<typeof seedHeartbeat>;

/** What a seed compares and sets: the timing, with the service's defaults filled in. */
function timingOf(h: SeedHeartbeat | Heartbeat) {
  const schedule = h.schedule ?? null;
  return {
    period_seconds: schedule === null ? h.period_seconds ?? null : null,
    schedule,
    timezone: schedule === null ? null : h.timezone ?? "UTC",
    grace_seconds: h.grace_seconds ?? HEARTBEAT_DEFAULT_GRACE_SECONDS,
    max_duration_seconds: h.max_duration_seconds ?? null,
    min_duration_seconds: h.min_duration_seconds ?? null,
  };
}

/** A heartbeat's export entry: its name and timing, defaults and nulls left out. */
export function exportHeartbeat(h: Heartbeat): SeedHeartbeat {
  return {
    name: h.name,
    ...(h.schedule === null
      ? { period_seconds: h.period_seconds! }
      : { schedule: h.schedule, timezone: h.timezone ?? "UTC" }),
    grace_seconds: h.grace_seconds,
    ...(h.max_duration_seconds !== null && { max_duration_seconds: h.max_duration_seconds }),
    ...(h.min_duration_seconds !== null && { min_duration_seconds: h.min_duration_seconds }),
    ...exportDependsOn(h.depends_on),
  };
}

/** The step a seed reports for one heartbeat. */
export interface HeartbeatStep {
  kind: "heartbeat";
  project: string;
  target: string;
  action: "created" | "updated" | "unchanged" | "deleted";
  note?: string;
}

/** Names listed twice in a project's `heartbeats`, as zod issues at the second one. */
export function heartbeatsListedTwice(
  list: SeedHeartbeat[],
  addIssue: (issue: { path: (string | number)[]; message: string }) => void,
): void {
  const seen = new Set<string>();
  list.forEach((h, i) => {
    if (seen.has(h.name)) {
      addIssue({ path: ["heartbeats", i, "name"], message: "this heartbeat is listed twice" });
    }
    seen.add(h.name);
  });
}

/**
 * A project's heartbeats brought in line with the file: created (a new ping URL, said in the
 * step's note), their timing changed (the URL stays), and with `prune` the unlisted deleted.
 * What they depend on is left to `seedDependencies`, once the project's probes are all there:
 * answered as `dependents`.
 */
export async function seedHeartbeats(
  client: ProbeClient,
  project: string,
  exists: boolean,
  want: SeedHeartbeat[],
  { prune = false, dryRun = false }: { prune?: boolean; dryRun?: boolean },
): Promise<{ steps: HeartbeatStep[]; dependents: Dependent[] }> {
  const steps: HeartbeatStep[] = [];
  const dependents: Dependent[] = [];
  const current = exists ? (await client.heartbeats.list({ project })).data : [];
  const byName = new Map(current.map((h) => [h.name, h]));
  for (const { depends_on, ...heartbeat } of want) {
    const have = byName.get(heartbeat.name);
    dependents.push({ target: heartbeat.name, want: depends_on, have: have?.depends_on });
    const timing = timingOf(heartbeat);
    if (!have) {
      if (!dryRun) await client.heartbeats.create({ project, ...heartbeat });
      steps.push({
        kind: "heartbeat",
        project,
        target: heartbeat.name,
        action: "created",
        note: "a new ping URL: point the job at it " +
          `(deno task cli heartbeats get ${project} ${heartbeat.name})`,
      });
      continue;
    }
    const differs = !isDeepStrictEqual(timing, timingOf(have));
    if (differs && !dryRun) {
      const { period_seconds, schedule, timezone, ...rest } = timing;
      await client.heartbeats.update({
        project,
        name: heartbeat.name,
        ...(schedule === null
          ? { period_seconds: period_seconds! }
          : { schedule, timezone: timezone! }),
        ...rest,
      });
    }
    steps.push({
      kind: "heartbeat",
      project,
      target: heartbeat.name,
      action: differs ? "updated" : "unchanged",
    });
  }
  if (prune) {
    const listed = new Set(want.map((h) => h.name));
    for (const heartbeat of current.filter((h) => !listed.has(h.name))) {
      if (!dryRun) await client.heartbeats.delete({ project, name: heartbeat.name });
      steps.push({ kind: "heartbeat", project, target: heartbeat.name, action: "deleted" });
    }
  }
  return { steps, dependents };
}
