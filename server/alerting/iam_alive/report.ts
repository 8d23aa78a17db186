import type { IamAliveReport, IamAliveRunnerFigures, IamAliveTrigger } from "@probe/shared";

export interface ReportFacts {
  sequence: number;
  trigger: IamAliveTrigger;
  now: Date;
  previousReportAt: Date | null;
  version: string;
  instanceId: string;
  startedAt: Date;
  intervalHours: number;
  counts: { projects: number; probes: number };
  runner?: IamAliveRunnerFigures;
}

/** The report, one JSON shape for every channel. */
export function buildReport(f: ReportFacts): IamAliveReport {
  return {
    type: "iam_alive",
    sequence: f.sequence,
    trigger: f.trigger,
    time: f.now.toISOString(),
    since: f.previousReportAt?.toISOString() ?? null,
    version: f.version,
    instance_id: f.instanceId,
    uptime_seconds: Math.max(0, Math.floor((f.now.getTime() - f.startedAt.getTime()) / 1000)),
    interval_hours: f.intervalHours,
    counts: f.counts,
    ...(f.runner && { runner: f.runner }),
  };
}

/** The mail subject of a report. */
export function reportSubject(r: IamAliveReport): string {
  const test = r.trigger === "test" ? " (test)" : "";
  return `I'm alive #${r.sequence}${test}: probe service ${r.version} on ${r.instance_id}`;
}

/** The report as plain text for a mail: readable lines, then the same JSON the other channels get. */
export function renderReportText(r: IamAliveReport): string {
  const lines = [
    `The probe service is alive.`,
    ``,
    `Report:        #${r.sequence} (${r.trigger === "test" ? "test" : "scheduled"})`,
    `Time:          ${r.time}`,
    `Previous:      ${r.since ?? "none"}`,
    `Version:       ${r.version}`,
    `Instance:      ${r.instance_id}`,
    `Uptime:        ${formatDuration(r.uptime_seconds)}`,
    `Interval:      every ${r.interval_hours} h`,
    `Projects:      ${r.counts.projects}`,
    `Probes:        ${r.counts.probes}`,
  ];
  if (r.runner) {
    lines.push(`Runs:          ${r.runner.runs} since the previous report`);
    lines.push(`Failures:      ${r.runner.failures}`);
    for (const [name, value] of Object.entries(r.runner)) {
      if (name !== "runs" && name !== "failures") lines.push(`${`${name}:`.padEnd(15)}${value}`);
    }
  }
  lines.push(``, `JSON:`, JSON.stringify(r, null, 2), ``);
  return lines.join("\n");
}

function formatDuration(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [d && `${d}d`, (d || h) && `${h}h`, (d || h || m) && `${m}m`, `${s}s`]
    .filter(Boolean).join(" ");
}
