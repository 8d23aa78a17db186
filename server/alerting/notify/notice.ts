/**
 * A message (an alert event, a test, an I'm alive report) as the paging and chat kinds say it: a
 * one-line subject, the cause, the details as label/value pairs, the link to the probe's page,
 * and the key of the incident it belongs to. The texts are as they came (data, never markup):
 * each kind escapes and cuts them for its vendor.
 *
 * @module
 */
import type { AlertEventType } from "@probe/shared";
import { reportSubject } from "../iam_alive/report.ts";
import { detailsOf, subjectOf } from "./formats.ts";
import { oneLine } from "./markup.ts";
import type { NotifyMessage } from "./provider.ts";

export interface Notice {
  /** The event's type; `iam_alive` for a report. */
  type: AlertEventType | "iam_alive";
  /** `DOWN shop: Checkout API`, on one line. */
  subject: string;
  cause: string | null;
  /** The details after the subject, in reading order; the cause and the link not among them. */
  details: [string, string][];
  /** The probe's page in the dashboard; null without `PUBLIC_URL` or for a test. */
  link: string | null;
  /** When it happened (ISO 8601). */
  at: string;
  project: string | null;
  /**
   * What a pager dedups by, at most 255 characters: one per incident
   * (`probe-service:shop:0123…:incident:42`), one per degraded spell of a probe (it has no
   * incident: its recovery ends it), one per test or report.
   */
  key: string;
}

/** The message as a notice. */
export function noticeOf(message: NotifyMessage): Notice {
  if (message.type === "iam_alive") {
    return {
      type: "iam_alive",
      subject: oneLine(reportSubject(message.report)),
      cause: null,
      details: [],
      link: null,
      at: message.report.time,
      project: null,
      key: `probe-service:iam-alive:${message.id}`.slice(0, 255),
    };
  }
  const { event } = message;
  const d = event.data;
  const key = event.type === "target.test"
    ? `probe-service:test:${message.id}`
    : d.incident_id !== null
    ? `probe-service:${d.project}:${d.probe_id}:incident:${d.incident_id}`
    : `probe-service:${d.project}:${d.probe_id}:degraded`;
  return {
    type: event.type,
    subject: subjectOf(event),
    cause: d.cause,
    details: detailsOf(event).filter(([name]) => name !== "Cause" && name !== "Dashboard"),
    link: d.link,
    at: event.timestamp,
    project: d.project,
    key: key.slice(0, 255),
  };
}

/** A detail's value by its label (`URL`, `Probe`); undefined when the notice has none. */
export const detailOf = (notice: Notice, name: string) =>
  notice.details.find(([n]) => n === name)?.[1];

/** Whether the notice says a probe is failing (down, or still down). */
export const isFailing = (notice: Notice) =>
  notice.type === "probe.down" || notice.type === "probe.reminder";

/** The notice as plain lines: the subject, the cause, the details, the link. */
export function plainLines(notice: Notice): string[] {
  return [
    notice.subject,
    ...(notice.cause ? [notice.cause] : []),
    ...notice.details.map(([name, value]) => `${name}: ${value}`),
    ...(notice.link ? [notice.link] : []),
  ];
}
