/**
 * Sends one alert event to one notification target, by name: the built-in `log`, or a stored
 * target through its kind's provider (`providers/`) and the one sender (`sender.ts`). One
 * attempt per call: retries and their back-off belong to the caller (the outbox), which passes
 * the same message id every time, so the `webhook-id` stays stable across retries.
 *
 * @module
 */
import { type AlertEvent, LOG_TARGET } from "@probe/shared";
import type { Db } from "../../storage/database.ts";
import { errorFields, type Logger } from "../../base/log.ts";
import { type TargetForDelivery, targetForDelivery } from "./stored_target.ts";
import { HEARTBEAT_SCHEME } from "../../storage/heartbeat_url.ts";
import { SERVICE_VERSION } from "../../base/version.ts";
import type { DeliveryResult } from "./delivery.ts";
import { logLine } from "./formats.ts";
import { providerOf } from "./providers/mod.ts";
import { createConnectionPool } from "../../base/outbound/request.ts";
import { createSender, type SenderOptions, type SmtpSettings } from "./sender.ts";

/** One notification: its stable id (the `webhook-id`) and the event it carries. */
export interface NotifierMessage {
  id: string;
  event: AlertEvent;
}

export interface Notifier {
  /** Sends one message to the target named; never throws. */
  send(target: string, message: NotifierMessage): Promise<DeliveryResult>;
  /** Closes the connections kept open between sends. */
  close?(): void;
}

export interface NotifierDeps extends Pick<SenderOptions, "policy" | "resolve" | "ca"> {
  db: Db;
  /** `SMTP_URL` and `MAIL_FROM`; without them mail targets are not configured. */
  mail?: SmtpSettings;
  /** Where the log target writes its line; stdout by default, whatever the log level. */
  writeLine?: (line: string) => void;
  /** Bounds each attempt (resolution, connection, answer); 10 s by default. */
  timeoutMs?: number;
  now?: () => Date;
  /** Told of unexpected failures (the database, say); they end as `internal error`. */
  log?: Logger;
  /**
   * Where the dashboard is reached (`PUBLIC_URL`, or the address the service listens at): each
   * event about a probe links to its page under it. Without it events have no link.
   */
  publicUrl?: string;
}

const USER_AGENT = `probe-service/${SERVICE_VERSION} (alerts)`;
const NOT_FOUND: DeliveryResult = { outcome: "failed", attempts: 0, error: "target not found" };

/**
 * The event a target test sends: `target.test`, naming the target, with no incident. Its
 * project is `probe-service`, so the subject reads `TEST probe-service: test of target <name>`.
 */
export function testEvent(target: string, at: Date): AlertEvent {
  return {
    type: "target.test",
    timestamp: at.toISOString(),
    data: {
      incident_id: null,
      project: "probe-service",
      probe_id: "test",
      label: `test of target ${target}`,
      url: null,
      link: null,
      state: "up",
      cause: null,
      error: null,
      http_status: null,
      failed_checks: null,
      started_at: null,
      resolved_at: null,
      duration_seconds: null,
      runs_failed: null,
      locations: null,
    },
  };
}

/**
 * A probe's page in the dashboard under `base` (its hash route, as `server/ui/routes.js` reads
 * it): `https://probes.example.com/#/projects/shop/probes/0123456789abcdef`.
 */
export function probeLink(base: string, project: string, probeId: string): string {
  const part = encodeURIComponent;
  return `${base.replace(/\/+$/, "")}/#/projects/${part(project)}/probes/${part(probeId)}`;
}

/**
 * A heartbeat's page in the dashboard under `base`:
 * `https://probes.example.com/#/projects/shop/heartbeats/nightly-backup`.
 */
export function heartbeatLink(base: string, project: string, name: string): string {
  const part = encodeURIComponent;
  return `${base.replace(/\/+$/, "")}/#/projects/${part(project)}/heartbeats/${part(name)}`;
}

/**
 * The event as it is sent: with the link to its probe's page, or its heartbeat's (none for a
 * test, or without a public URL), and every field, those added since it was queued too (as null).
 */
export function eventToSend(event: AlertEvent, publicUrl: string | undefined): AlertEvent {
  const d = event.data;
  const heartbeat = d.url?.startsWith(HEARTBEAT_SCHEME)
    ? d.url.slice(HEARTBEAT_SCHEME.length)
    : null;
  const link = !publicUrl || event.type === "target.test"
    ? null
    : heartbeat !== null
    ? heartbeatLink(publicUrl, d.project, heartbeat)
    : probeLink(publicUrl, d.project, d.probe_id);
  return {
    ...event,
    data: {
      ...d,
      url: d.url ?? null,
      link,
      error: d.error ?? null,
      http_status: d.http_status ?? null,
      failed_checks: d.failed_checks ?? null,
    },
  };
}

/** The sender of alert events to notification targets. */
export function createNotifier(deps: NotifierDeps): Notifier {
  const now = deps.now ?? (() => new Date());
  const writeLine = deps.writeLine ?? ((line: string) => console.log(line));
  // Kept connections: a burst of sends to one receiver does not open (and pay for) one each.
  const pool = createConnectionPool();
  const send = createSender({ ...deps, userAgent: USER_AGENT, now, pool });
  // One read of a target for the sends that look it up at once (a burst to one target): a send
  // may use a read begun at most one query's time before it, never an older one.
  const reading = new Map<string, Promise<TargetForDelivery | null>>();
  const targetNamed = (name: string) => {
    let read = reading.get(name);
    if (!read) {
      read = targetForDelivery({ db: deps.db, name }).finally(() => reading.delete(name));
      reading.set(name, read);
    }
    return read;
  };

  return {
    close: () => pool.close(),
    async send(name, queued) {
      const message = { ...queued, event: eventToSend(queued.event, deps.publicUrl) };
      try {
        if (name === LOG_TARGET) {
          writeLine(logLine(message.event, { id: message.id, target: name, time: now() }));
          return { outcome: "delivered", attempts: 1 };
        }
        const target = await targetNamed(name);
        const provider = target && providerOf(target.kind);
        if (!target || !provider) return NOT_FOUND;
        const request = provider.request(target, { type: "alert", ...message }, {
          now: now(),
        });
        return await send(provider, request);
      } catch (error) {
        // The result is stored and shown: a fixed summary. The details go to the log.
        deps.log?.warn("notification not sent", { target: name, ...errorFields(error) });
        return { outcome: "failed", attempts: 0, error: "internal error" };
      }
    },
  };
}
