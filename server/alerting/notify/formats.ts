/**
 * How one alert event reads on each kind of target: a subject line (`DOWN shop: <label>`), the
 * JSON of a Slack incoming webhook, of a Discord webhook, a mail and a log line. One renderer per
 * kind, for every event type; the webhook target sends the event itself. Each names the probe's
 * label and URL (masked), says why it failed in words (`cause`), names the failing and the fine
 * locations and links to the probe's page in the dashboard (`link`).
 *
 * @module
 */
import type { AlertEvent, AlertEventType } from "@probe/shared";

const VERBS: Record<AlertEventType, string> = {
  "probe.down": "DOWN",
  "probe.recovered": "RECOVERED",
  "probe.degraded": "DEGRADED",
  "probe.reminder": "REMINDER",
  "probe.acknowledged": "ACKNOWLEDGED",
  "probe.flapping": "FLAPPING",
  "target.test": "TEST",
};

/** Discord embed colours (and the Slack attachment-free equivalent: an emoji per type). */
const COLOURS: Record<AlertEventType, number> = {
  "probe.down": 0xd93025,
  "probe.recovered": 0x1e8e3e,
  "probe.degraded": 0xf29900,
  "probe.reminder": 0xd93025,
  "probe.acknowledged": 0xf29900,
  "probe.flapping": 0xf29900,
  "target.test": 0x1a73e8,
};

const EMOJI: Record<AlertEventType, string> = {
  "probe.down": ":red_circle:",
  "probe.recovered": ":large_green_circle:",
  "probe.degraded": ":large_orange_circle:",
  "probe.reminder": ":red_circle:",
  "probe.acknowledged": ":large_yellow_circle:",
  "probe.flapping": ":large_orange_circle:",
  "target.test": ":large_blue_circle:",
};

/** Cuts text to at most `max` characters (code points are not split), marking the cut. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/**
 * The first line of every message: `DOWN shop: https://shop.example.com/health`; an escalation
 * step's says so before the project (`DOWN (escalation step 2) shop: …`), where a cut keeps it.
 */
export function subjectOf(event: AlertEvent): string {
  // A label is one line in a subject; control characters would break headers and layouts.
  const label = event.data.label.replace(/\p{Cc}+/gu, " ");
  const step = event.data.escalation_step;
  const escalation = step === undefined ? "" : ` (escalation step ${step})`;
  return `${VERBS[event.type]}${escalation} ${event.data.project}: ${label}`;
}

/**
 * Why an escalation step's message came, in words: `step 2, still down after 10 min and not
 * acknowledged` (its `Escalation` detail); null for any other message.
 */
export function escalationText(event: AlertEvent): string | null {
  const { escalation_step: step, started_at } = event.data;
  if (step === undefined) return null;
  const since = started_at === null
    ? null
    : (Date.parse(event.timestamp) - Date.parse(started_at)) / 1000;
  const after = since === null || Number.isNaN(since) || since < 0
    ? ""
    : ` after ${durationText(since)}`;
  return `step ${step}, still down${after} and not acknowledged`;
}

/** A duration in words: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function durationText(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

/** The details of an event as label/value pairs, the ones that apply, in reading order. */
export function detailsOf(event: AlertEvent): [string, string][] {
  const d = event.data;
  const rows: [string, string | null][] = [
    // First: it is why this message came although the incident opened a while ago.
    ["Escalation", escalationText(event)],
    ["Project", d.project],
    ["Probe", d.label],
    // The label is the URL when there is no label of its own: then it is said once.
    ["URL", d.url && d.url !== d.label ? d.url : null],
    ["State", d.state],
    ["Cause", d.cause],
    ["Runs failed", d.runs_failed === null ? null : String(d.runs_failed)],
    ["Failing from", d.locations?.down.join(", ") ?? null],
    ["Fine from", d.locations ? [...d.locations.up, ...d.locations.degraded].join(", ") : null],
    ["Unknown from", d.locations ? unknownText(d.locations) : null],
    ["Started", d.started_at],
    ["Resolved", d.resolved_at],
    ["Duration", d.duration_seconds === null ? null : durationText(d.duration_seconds)],
    ["Incident", d.incident_id],
    ["Probe id", d.probe_id],
    ["Dashboard", d.link],
  ];
  return rows.filter((row): row is [string, string] => row[1] !== null && row[1] !== "");
}

/** The unknown locations, the stale ones said so: `eu (no result for 3 intervals), us`. */
function unknownText(l: NonNullable<AlertEvent["data"]["locations"]>): string {
  return l.unknown.map((n) => l.stale.includes(n) ? `${n} (no result for 3 intervals)` : n)
    .join(", ");
}

/** Slack mrkdwn treats `&`, `<` and `>` as markup (`<!channel>` pings everyone): escaped. */
export function slackEscape(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/**
 * A Slack incoming-webhook message: `text` (the subject, shown in notifications and by clients
 * without blocks) and `blocks` with the details as fields. Within Slack's limits (a section's
 * text 3,000 characters, at most 10 fields of 2,000). Slack reads `text` as mrkdwn too (and
 * pushes it to phones), so it is escaped like the blocks: a label's `<!channel>` mentions no one.
 */
export function slackMessage(event: AlertEvent) {
  const subject = subjectOf(event);
  const { cause, link } = event.data;
  // The cause and the link lead the message, the link last and never cut; the fields (10 at
  // most) hold the rest.
  const head = [`${EMOJI[event.type]} *${slackEscape(subject)}*`, cause && slackEscape(cause)]
    .filter(Boolean).join("\n");
  const lead = link
    ? `${truncate(head, 2000)}\n<${slackEscape(link)}|Open in the dashboard>`
    : truncate(head, 3000);
  const rest = detailsOf(event).filter(([name]) => name !== "Cause" && name !== "Dashboard");
  const fields = rest.slice(0, 10).map(([name, value]) => ({
    type: "mrkdwn",
    text: truncate(`*${name}*\n${slackEscape(value)}`, 2000),
  }));
  return {
    // Cut first, then escaped: an entity (`&amp;`) is never cut in half.
    text: slackEscape(truncate(subject, 3000)),
    blocks: [
      {
        type: "section",
        text: { type: "mrkdwn", text: lead },
      },
      { type: "section", fields },
      {
        type: "context",
        elements: [{ type: "mrkdwn", text: `${event.type} at ${event.timestamp}` }],
      },
    ],
  };
}

/**
 * A Discord webhook message: `content` (the subject) and one embed with the details as fields,
 * within Discord's limits (content 2,000 characters, title 256, field values 1,024). Mentions
 * are turned off: a label holding `@everyone` pings no one.
 */
export function discordMessage(event: AlertEvent) {
  const subject = subjectOf(event);
  return {
    content: truncate(subject, 2000),
    embeds: [{
      title: truncate(subject, 256),
      // The title links to the probe's page; the cause reads under it.
      ...(event.data.link && { url: event.data.link }),
      ...(event.data.cause && { description: truncate(event.data.cause, 4096) }),
      color: COLOURS[event.type],
      timestamp: event.timestamp,
      fields: detailsOf(event).map(([name, value]) => ({
        name,
        value: truncate(value, 1024),
        inline: value.length <= 40,
      })),
      footer: { text: event.type },
    }],
    allowed_mentions: { parse: [] },
  };
}

/** A plain-text mail: the subject line, then the details one per line, then the event's JSON. */
export function mailMessage(event: AlertEvent): { subject: string; text: string } {
  const subject = truncate(subjectOf(event), 200);
  const lines = detailsOf(event).map(([name, value]) => `${name}: ${value}`);
  const text = [subject, "", ...lines, "", JSON.stringify(event, null, 2), ""].join("\n");
  return { subject, text };
}

/** The log target's line: `{"time","level":"info","msg":"alert","id","target","event"}`. */
export function logLine(
  event: AlertEvent,
  { id, target, time }: { id: string; target: string; time: Date },
): string {
  return JSON.stringify({
    time: time.toISOString(),
    level: "info",
    msg: "alert",
    id,
    target,
    event,
  });
}
