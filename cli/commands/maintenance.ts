import { Command, InvalidArgumentError, Option } from "commander";
import type { MaintenanceListInput, MaintenanceWindow } from "@probe/client";
import { type CliContext, UsageError } from "../context.ts";
import { EXIT } from "../exit_codes.ts";
import { table } from "../output.ts";

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Commander parser for a duration such as `90m`, `2h`, `1d12h`: milliseconds. */
export function duration(value: string): number {
  const parts = [...value.trim().matchAll(/(\d+)([mhd])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== value.trim()) {
    throw new InvalidArgumentError("Not a duration such as 30m, 2h or 1d12h.");
  }
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_MS[unit], 0);
  if (ms <= 0) throw new InvalidArgumentError("Must be longer than nothing.");
  return ms;
}

const windowRows = (windows: MaintenanceWindow[]) =>
  table(
    ["ID", "STARTS_AT", "ENDS_AT", "STATE", "REASON"],
    windows.map((w) => [w.id, w.starts_at, w.ends_at, w.state, w.reason]),
  );

/** `maintenance list|add|delete`: spans of time in which a project's runs raise no alerts. */
export function maintenanceCommand(context: () => CliContext): Command {
  const maintenance = new Command("maintenance")
    .description("List, add and delete a project's maintenance windows");

  maintenance.command("list")
    .description("List a project's maintenance windows by start")
    .argument("<project>", "project name")
    .addOption(
      new Option("--state <state>", "only active, upcoming or past ones (default all)")
        .choices(["active", "upcoming", "past", "all"]),
    )
    .action(async (project: string, options: { state?: MaintenanceListInput["state"] }) => {
      const { client, out } = context();
      const result = await client().maintenance.list({ project, state: options.state });
      out.result(
        () => result.data.length ? windowRows(result.data) : "No maintenance windows.",
        result,
      );
    });

  maintenance.command("add")
    .description(
      "Add a maintenance window: its runs are recorded but move no state, alert nobody and " +
        "are left out of uptime",
    )
    .argument("<project>", "project name")
    .option(
      "--starts <time>",
      "when it starts: ISO 8601 with an offset (2031-03-01T10:00:00+02:00), or now (default)",
    )
    .addOption(
      new Option("--ends <time>", "when it ends: ISO 8601 with an offset").conflicts("for"),
    )
    .addOption(
      new Option("--for <duration>", "how long instead of --ends: 30m, 2h, 1d12h").argParser(
        duration,
      ),
    )
    .option("--reason <text>", "why, for the people reading the list")
    .action(async (
      project: string,
      options: { starts?: string; ends?: string; for?: number; reason?: string },
    ) => {
      const { client, out } = context();
      const starts = options.starts === undefined || options.starts === "now"
        ? new Date().toISOString()
        : options.starts;
      let ends = options.ends;
      if (options.for !== undefined) {
        const from = Date.parse(starts);
        if (Number.isNaN(from)) {
          throw new UsageError(`--starts is not a time: ${starts}`, EXIT.usage);
        }
        ends = new Date(from + options.for).toISOString();
      }
      if (ends === undefined) throw new UsageError("Give --ends or --for", EXIT.usage);
      const result = await client().maintenance.create({
        project,
        starts_at: starts,
        ends_at: ends,
        reason: options.reason,
      });
      const w = result.data;
      out.result(
        () =>
          `Added maintenance window ${w.id} to ${w.project}: ${w.starts_at} to ${w.ends_at} ` +
          `(${w.state}).`,
        result,
      );
    });

  maintenance.command("delete")
    .description("Delete a maintenance window")
    .argument("<project>", "project name")
    .argument("<id>", "window id")
    .action(async (project: string, id: string) => {
      const { client, out } = context();
      await client().maintenance.delete({ project, id });
      out.result(
        () => `Deleted maintenance window ${id} of ${project}.`,
        { data: { project, id, deleted: true } },
      );
    });

  return maintenance;
}
