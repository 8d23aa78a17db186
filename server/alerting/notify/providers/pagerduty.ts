/**
 * `pagerduty`: PagerDuty's Events API v2 (`POST /v2/enqueue`). A probe down (and each reminder)
 * is a `trigger`, its acknowledgement here an `acknowledge`, its recovery a `resolve`, all with
 * the incident's `dedup_key`, so PagerDuty keeps one alert per incident. A degraded probe is a
 * `warning` trigger its recovery resolves; a test is an `info` trigger of its own. The routing
 * key (an integration key of a service) is the credential.
 *
 * @module
 */
import { truncate } from "../formats.ts";
import { detailOf, type Notice, noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { baseUrl, secretToken } from "./vendor_fields.ts";

export const PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue";

function actionOf(notice: Notice): "trigger" | "acknowledge" | "resolve" {
  if (notice.type === "probe.recovered") return "resolve";
  if (notice.type === "probe.acknowledged") return "acknowledge";
  return "trigger";
}

function severityOf(notice: Notice): "critical" | "warning" | "info" {
  if (notice.type === "probe.down" || notice.type === "probe.reminder") return "critical";
  if (notice.type === "probe.degraded" || notice.type === "probe.flapping") return "warning";
  return "info";
}

export const pagerduty = defineProvider({
  kind: "pagerduty",
  label: "PagerDuty",
  description:
    "An alert in PagerDuty (Events API v2): triggered, acknowledged and resolved with the incident",
  fields: {
    routing_key: secretToken(
      "Routing key",
      "The integration key of an Events API v2 integration on a PagerDuty service",
    ),
    url: baseUrl("Events API URL", PAGERDUTY_EVENTS_URL),
  },
  request: ({ routing_key, url = PAGERDUTY_EVENTS_URL }, message) => {
    const notice = noticeOf(message);
    const action = actionOf(notice);
    const event = {
      routing_key,
      event_action: action,
      dedup_key: notice.key,
      // An acknowledge or resolve needs only the key; a trigger describes the alert.
      ...(action === "trigger" && {
        payload: {
          summary: truncate(notice.subject, 1024),
          // What failed: the probe's URL (masked), else its label.
          source: truncate(
            detailOf(notice, "URL") ?? detailOf(notice, "Probe") ?? "probe-service",
            255,
          ),
          severity: severityOf(notice),
          timestamp: notice.at,
          ...(notice.project && { group: notice.project }),
          class: notice.type,
          custom_details: Object.fromEntries([
            ...(notice.cause ? [["Cause", truncate(notice.cause, 4096)]] : []),
            ...notice.details.map(([name, value]) => [name, truncate(value, 4096)]),
          ]),
        },
        client: "probe-service",
        ...(notice.link && {
          client_url: notice.link,
          links: [{ href: notice.link, text: "Open in the dashboard" }],
        }),
      }),
    };
    return { transport: "http", method: "POST", url, body: JSON.stringify(event) };
  },
});
