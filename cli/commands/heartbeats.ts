import { Command, InvalidArgumentError, Option } from "commander";
import type { Heartbeat, HeartbeatCreateInput, HeartbeatUpdateInput } from "@probe/client";
import type { CliContext } from "../context.ts";
import { integer } from "../options.ts";
import { record, table } from "../output.ts";

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Commander parser for seconds: `90`, or with units `90s`, `15m`, `2h`, `1d12h`. */
export function seconds(value: string): number {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const parts = [...text.matchAll(/(\d+)([smhd])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) {
    throw new InvalidArgumentError("Not a number of seconds, nor a duration such as 15m or 1d12h.");
  }
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNIT_SECONDS[unit], 0);
}

/** When the job is expected, in a table cell: `every 3600 s` or `30 2 * * * Europe/Berlin`. */
const expected = (h: Heartbeat) =>
  h.schedule === null ? `every ${h.period_seconds} s` : `${h.schedule} ${h.timezone}`;

const heartbeatRows = (heartbeats: Heartbeat[]) =>
  table(
    ["NAME", "STATE", "EXPECTED", "GRACE_S", "LAST_PING", "NEXT_DEADLINE", "PINGS"],
    heartbeats.map((h) => [
      h.name,
      h.state,
      expected(h),
      h.grace_seconds,
      h.last_ping_at,
      h.next_deadline,
      h.pings_total,
    ]),
  );

const heartbeatRecord = (h: Heartbeat) =>
  record({
    project: h.project,
    name: h.name,
    state: h.state,
    state_since: h.state_since,
    expected: expected(h),
    grace_seconds: h.grace_seconds,
    max_duration_seconds: h.max_duration_seconds,
    min_duration_seconds: h.min_duration_seconds,
    last_ping_at: h.last_ping_at,
    last_ping_kind: h.last_ping_kind,
    last_duration_ms: h.last_duration_ms,
    next_deadline: h.next_deadline,
    pings_total: h.pings_total,
    probe_id: h.probe_id,
    ping_url: h.ping_url,
  });

interface TimingOptions {
  period?: number;
  schedule?: string;
  timezone?: string;
  grace?: number;
  maxDuration?: number | false;
  minDuration?: number | false;
}

/** The timing options every verb that sets them takes. */
function timingOptions(command: Command, { clearable }: { clearable: boolean }): Command {
  command
    .addOption(
      new Option("--period <seconds>", "how often the job runs: 60, 15m, 1h, 1d (10 s to a year)")
        .argParser(seconds).conflicts("schedule"),
    )
    .option("--schedule <cron>", 'when the job runs, as cron: "30 2 * * *"')
    .option("--timezone <zone>", "the IANA zone of --schedule (default UTC): Europe/Berlin")
    .addOption(
      new Option("--grace <seconds>", "how late a ping may be (default 60 s)").argParser(seconds),
    )
    .addOption(
      new Option("--max-duration <seconds>", "how long after /start its success may come")
        .argParser(seconds),
    )
    .addOption(
      new Option("--min-duration <seconds>", "a run shorter than this from /start is a failure")
        .argParser(seconds),
    );
  if (clearable) {
    command
      .option("--no-max-duration", "a started run may take the grace again")
      .option("--no-min-duration", "no shortest run");
  }
  return command;
}

/** The input fields the options give; only those given. */
function timingInput(o: TimingOptions) {
  const input: Omit<HeartbeatUpdateInput, "project" | "name"> = {};
  if (o.period !== undefined) input.period_seconds = o.period;
  if (o.schedule !== undefined) input.schedule = o.schedule;
  if (o.timezone !== undefined) input.timezone = o.timezone;
  if (o.grace !== undefined) input.grace_seconds = o.grace;
  if (o.maxDuration !== undefined) {
    input.max_duration_seconds = o.maxDuration === false ? null : o.maxDuration;
  }
  if (o.minDuration !== undefined) {
    input.min_duration_seconds = o.minDuration === false ? null : o.minDuration;
  }
  return input;
}

/** `heartbeats create|list|get|update|delete|pings`: URLs jobs ping, alerts when they fall silent. */
export function heartbeatsCommand(context: () => CliContext): Command {
  const heartbeats = new Command("heartbeats")
    .description("Create, list, show, change and delete heartbeats: URLs that jobs ping");

  timingOptions(
    heartbeats.command("create")
      .description(
        "Create a heartbeat and print its ping URL; give --period or --schedule. Jobs ping it " +
          "with curl (docs/heartbeats.md)",
      )
      .argument("<project>", "project name")
      .argument("<name>", "the heartbeat's name, unique in its project"),
    { clearable: false },
  ).action(async (project: string, name: string, options: TimingOptions) => {
    const { client, out } = context();
    const input = { project, name, ...timingInput(options) } as HeartbeatCreateInput;
    const result = await client().heartbeats.create(input);
    out.result(
      () =>
        `Created heartbeat ${name} in ${project} (${expected(result.data)}).\n` +
        `Ping URL (keep it secret): ${result.data.ping_url}\n` +
        `  curl -fsS -m 10 --retry 3 -o /dev/null ${result.data.ping_url}`,
      result,
    );
  });

  heartbeats.command("list")
    .description("List a project's heartbeats by name")
    .argument("<project>", "project name")
    .action(async (project: string) => {
      const { client, out } = context();
      const result = await client().heartbeats.list({ project });
      out.result(
        () => result.data.length ? heartbeatRows(result.data) : "No heartbeats.",
        result,
      );
    });

  heartbeats.command("get")
    .description("Show a heartbeat: its state, last ping, next deadline and ping URL")
    .argument("<project>", "project name")
    .argument("<name>", "heartbeat name")
    .action(async (project: string, name: string) => {
      const { client, out } = context();
      const result = await client().heartbeats.get({ project, name });
      out.result(() => heartbeatRecord(result.data), result);
    });

  timingOptions(
    heartbeats.command("update")
      .description(
        "Change a heartbeat's timing (--period replaces a schedule, --schedule a period); its " +
          "ping URL stays",
      )
      .argument("<project>", "project name")
      .argument("<name>", "heartbeat name"),
    { clearable: true },
  ).action(async (project: string, name: string, options: TimingOptions) => {
    const { client, out } = context();
    const result = await client().heartbeats.update({ project, name, ...timingInput(options) });
    out.result(
      () => `Updated heartbeat ${name} of ${project}.\n${heartbeatRecord(result.data)}`,
      result,
    );
  });

  heartbeats.command("delete")
    .description("Delete a heartbeat: its ping URL answers 404 from then on")
    .argument("<project>", "project name")
    .argument("<name>", "heartbeat name")
    .action(async (project: string, name: string) => {
      const { client, out } = context();
      await client().heartbeats.delete({ project, name });
      out.result(
        () => `Deleted heartbeat ${name} of ${project}.`,
        { data: { project, name, deleted: true } },
      );
    });

  heartbeats.command("pings")
    .description("A heartbeat's latest pings, the latest first (the last 100 are kept)")
    .argument("<project>", "project name")
    .argument("<name>", "heartbeat name")
    .addOption(new Option("--limit <n>", "at most this many (1 to 100)").argParser(integer))
    .action(async (project: string, name: string, options: { limit?: number }) => {
      const { client, out } = context();
      const result = await client().heartbeats.pings({ project, name, limit: options.limit });
      out.result(
        () =>
          result.data.length
            ? table(
              ["N", "AT", "KIND", "EXIT", "METHOD", "FROM", "BODY"],
              result.data.map((p) => [
                p.n,
                p.at,
                p.kind,
                p.exit_code,
                p.method,
                p.address,
                p.body === null ? null : oneLine(p.body),
              ]),
            )
            : "No pings yet.",
        result,
      );
    });

  return heartbeats;
}

/**
 * A body in one table cell: its first line, at most 60 characters, control characters (a
 * terminal's escapes, which a job's output may hold) shown as `?`.
 */
function oneLine(body: string): string {
  // deno-lint-ignore no-control-regex -- control characters are what is replaced
  const first = body.split("\n", 1)[0].replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
  return first.length > 60 || body.includes("\n") ? `${first.slice(0, 60)}…` : first;
}
