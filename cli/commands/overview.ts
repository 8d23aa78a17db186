import { Command } from "commander";
import type { Overview } from "@probe/client";
import type { CliContext } from "../context.ts";
import { table } from "../output.ts";
import { percent } from "./results.ts";

/** Every probe on one line, projects by name and, within one, down first (the service's order). */
const probeRows = (projects: Overview["projects"]) =>
  table(
    [
      "PROJECT",
      "PROBE_ID",
      "NAME",
      "STATE",
      "SINCE",
      "UPTIME_24H",
      "UPTIME_7D",
      "UPTIME_30D",
      "P95_24H_MS",
      "LAST_RUN_AT",
    ],
    projects.flatMap((p) => {
      const project = p.status === "enabled" ? p.project : `${p.project} (disabled)`;
      if (p.probes.length === 0) return [[project, null, "(no probes)", ...Array(7).fill(null)]];
      return p.probes.map((probe) => [
        project,
        probe.probe_id,
        probe.label ?? probe.url,
        probe.state,
        probe.state_since,
        percent(probe.uptime_24h),
        percent(probe.uptime_7d),
        percent(probe.uptime_30d),
        probe.p95_24h,
        probe.last_run_at,
      ]);
    }),
  );

const incidentRows = (incidents: Overview["incidents"]) =>
  table(
    ["INCIDENT", "PROJECT", "LABEL", "STARTED_AT", "CAUSE", "ACKNOWLEDGED"],
    incidents.map((i) => [
      i.id,
      i.project,
      i.label,
      i.started_at,
      i.cause,
      i.acknowledged_at ? "yes" : "no",
    ]),
  );

/** `overview`: the dashboard's picture, every probe's state, uptime and latency, and what is open. */
export function overviewCommand(context: () => CliContext): Command {
  return new Command("overview")
    .description(
      "Show every project's probes with state, uptime and p95 latency (down first), and the " +
        "open incidents",
    )
    .option("--project <name>", "only this project")
    .action(async (options: { project?: string }) => {
      const { client, out } = context();
      const result = await client().overview.get({ project: options.project });
      out.result(() => {
        const { projects, incidents } = result.data;
        const { probes, generated_at } = result.meta;
        const count = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;
        return [
          projects.length ? probeRows(projects) : "No projects.",
          "",
          incidents.length ? incidentRows(incidents) : "No open incidents.",
          "",
          `${count(projects.length, "project")}, ${count(probes, "probe")}, ` +
          `${count(incidents.length, "open incident")}, at ${generated_at}.`,
        ].join("\n");
      }, result);
    });
}
