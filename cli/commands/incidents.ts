import { Command, Option } from "commander";
import type { Incident, IncidentDetail } from "@probe/client";
import type { CliContext } from "../context.ts";
import { integer } from "../options.ts";
import { record, table } from "../output.ts";

const incidentRows = (incidents: Incident[]) =>
  table(
    ["ID", "PROJECT", "LABEL", "STATE", "STARTED_AT", "DURATION_S", "CAUSE", "ACKNOWLEDGED"],
    incidents.map((i) => [
      i.id,
      i.project,
      i.label,
      i.state === "open" ? "open" : `resolved (${i.resolution})`,
      i.started_at,
      i.duration_seconds,
      i.cause,
      i.acknowledged_at ? "yes" : "no",
    ]),
  );

const showIncident = ({ notifications, ...incident }: IncidentDetail) =>
  [
    record(incident),
    "",
    notifications.length
      ? table(
        ["NOTIFICATION", "TYPE", "TARGET", "STATUS", "ATTEMPTS", "CREATED_AT", "ERROR"],
        notifications.map((n) => [
          n.id,
          n.type,
          n.target,
          n.status,
          n.attempts,
          n.created_at,
          n.last_error,
        ]),
      )
      : "No notifications.",
  ].join("\n");

/** `incidents list|get|ack`: a probe went down, then came back. */
export function incidentsCommand(context: () => CliContext): Command {
  const incidents = new Command("incidents")
    .description("List incidents, show one with its notifications, acknowledge one");

  incidents.command("list")
    .description("List incidents, newest first")
    .option("--project <name>", "only this project's")
    .addOption(
      new Option("--state <state>", "only open or only resolved ones").choices([
        "open",
        "resolved",
      ]),
    )
    .option("--limit <n>", "how many, 1 to 500 (default 50)", integer)
    .option("--before <id>", "only incidents older than this one (the next page's cursor)")
    .action(async (options: {
      project?: string;
      state?: "open" | "resolved";
      limit?: number;
      before?: string;
    }) => {
      const { client, out } = context();
      const result = await client().incidents.list(options);
      out.result(() => {
        if (result.data.length === 0) return "No incidents.";
        const rows = incidentRows(result.data);
        const next = result.meta.next_before;
        return next ? `${rows}\nNext page: --before ${next}` : rows;
      }, result);
    });

  incidents.command("get")
    .description("Show one incident and the notifications sent for it")
    .argument("<id>", "incident id")
    .action(async (id: string) => {
      const { client, out } = context();
      const result = await client().incidents.get({ id });
      out.result(() => showIncident(result.data), result);
    });

  incidents.command("ack")
    .description("Acknowledge an open incident: its reminders stop")
    .argument("<id>", "incident id")
    .action(async (id: string) => {
      const { client, out } = context();
      const result = await client().incidents.acknowledge({ id });
      out.result(
        () => `Acknowledged incident ${result.data.id} (${result.data.label}): no more reminders.`,
        result,
      );
    });

  return incidents;
}
