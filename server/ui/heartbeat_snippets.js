// @ts-check
/**
 * What a heartbeat's page offers to copy: its ping URL called from curl, a crontab line, a
 * systemd service (a start, a success after `ExecStart`, a failure through `OnFailure`) and a
 * Kubernetes CronJob whose command pings with the job's exit code (docs/heartbeats.md).
 */

/** The curl every snippet calls: fails on an HTTP error, gives up after 10 s, retries thrice. */
const CURL = "curl -fsS -m 10 --retry 3";

/**
 * A name fit for a unit file or a Kubernetes object: lower case, `-` for anything else.
 * @param {string} name
 */
export function unitName(name) {
  const cleaned = name.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  return (cleaned || "job").slice(0, 52);
}

/**
 * When cron runs the job: the heartbeat's own schedule, or a period cron can say (every N
 * minutes or hours that divide an hour or a day); null for a period it cannot.
 * @param {{ schedule: string | null, period_seconds: number | null }} timing
 * @returns {string | null}
 */
export function cronOf({ schedule, period_seconds: period }) {
  if (schedule !== null) return schedule;
  if (period === null || period % 60 !== 0) return null;
  const minutes = period / 60;
  if (minutes === 1) return "* * * * *";
  if (minutes < 60 && 60 % minutes === 0) return `*/${minutes} * * * *`;
  if (minutes === 60) return "0 * * * *";
  const hours = minutes / 60;
  if (Number.isInteger(hours) && hours < 24 && 24 % hours === 0) return `0 */${hours} * * *`;
  if (hours === 24) return "0 0 * * *";
  if (hours === 168) return "0 0 * * 0";
  return null;
}

/**
 * The snippets for one heartbeat, each `{ id, label, text }`.
 * @param {{ name: string, ping_url: string, schedule: string | null,
 *   period_seconds: number | null, timezone: string | null }} heartbeat
 */
export function snippets(heartbeat) {
  const url = heartbeat.ping_url;
  const unit = unitName(heartbeat.name);
  const cron = cronOf(heartbeat);
  const zone = heartbeat.timezone && heartbeat.timezone !== "UTC" ? heartbeat.timezone : null;
  const when = cron ?? "*/5 * * * *";
  const cronNote = cron === null
    ? ["# Set the times to the heartbeat's period; cron cannot say it exactly."]
    : [];
  return [
    {
      id: "snippet-curl",
      label: "curl",
      text: [
        `${CURL} -o /dev/null ${url}            # success`,
        `${CURL} -o /dev/null ${url}/start      # started`,
        `${CURL} -o /dev/null ${url}/fail       # failed`,
        `${CURL} --data-binary @job.log ${url}/$?   # exit code, with the job's log`,
      ].join("\n"),
    },
    {
      id: "snippet-cron",
      label: "crontab line",
      text: [
        ...cronNote,
        ...(zone ? [`CRON_TZ=${zone}`] : []),
        `${when} /path/to/job > /tmp/${unit}.log 2>&1; ` +
        `${CURL} --data-binary @/tmp/${unit}.log ${url}/$?`,
      ].join("\n"),
    },
    {
      id: "snippet-systemd",
      label: "systemd units",
      text: [
        `# /etc/systemd/system/${unit}.service`,
        "[Unit]",
        `Description=${heartbeat.name}`,
        `OnFailure=${unit}-failed.service`,
        "",
        "[Service]",
        "Type=oneshot",
        `ExecStartPre=-/usr/bin/${CURL} -o /dev/null ${url}/start`,
        "ExecStart=/path/to/job",
        `ExecStartPost=/usr/bin/${CURL} -o /dev/null ${url}`,
        "",
        `# /etc/systemd/system/${unit}-failed.service`,
        "[Service]",
        "Type=oneshot",
        `ExecStart=/usr/bin/${CURL} -o /dev/null ${url}/fail`,
      ].join("\n"),
    },
    {
      id: "snippet-kubernetes",
      label: "Kubernetes CronJob",
      text: [
        ...cronNote,
        "apiVersion: batch/v1",
        "kind: CronJob",
        "metadata:",
        `  name: ${unit}`,
        "spec:",
        `  schedule: ${JSON.stringify(when)}`,
        ...(zone ? [`  timeZone: ${JSON.stringify(zone)}`] : []),
        "  concurrencyPolicy: Forbid",
        "  jobTemplate:",
        "    spec:",
        "      backoffLimit: 0",
        "      template:",
        "        spec:",
        "          restartPolicy: Never",
        "          containers:",
        `            - name: ${unit}`,
        "              image: your-image-with-curl",
        '              command: ["/bin/sh", "-c"]',
        "              args:",
        "                - |",
        `                  ${CURL} -o /dev/null ${url}/start`,
        "                  /path/to/job > /tmp/log 2>&1",
        "                  code=$?",
        `                  ${CURL} --data-binary @/tmp/log ${url}/$code`,
        "                  exit $code",
      ].join("\n"),
    },
  ];
}
