/**
 * `opsgenie`: Opsgenie's Alert API. A probe down (and each reminder) creates an alert whose
 * `alias` is the incident's key (Opsgenie counts a repeat instead of opening a second alert); its
 * acknowledgement here acknowledges it and its recovery closes it, both by that alias. The API
 * key (of an API integration) is sent as `Authorization: GenieKey …`; the URL is the US API's
 * unless the account is in the EU (`https://api.eu.opsgenie.com`).
 *
 * @module
 */
import { truncate } from "../formats.ts";
import { detailOf, type Notice, noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { baseUrl, endpoint, secretToken } from "./vendor_fields.ts";

export const OPSGENIE_URL = "https://api.opsgenie.com";
export const OPSGENIE_EU_URL = "https://api.eu.opsgenie.com";

/** P1 for a probe down, P3 degraded, P5 a test (Opsgenie's default is P3). */
function priorityOf(notice: Notice): "P1" | "P3" | "P5" {
  if (notice.type === "probe.down" || notice.type === "probe.reminder") return "P1";
  return notice.type === "probe.degraded" || notice.type === "probe.flapping" ? "P3" : "P5";
}

/** The alert's fields, within the Alert API's limits. */
function alertOf(notice: Notice) {
  const description = [
    ...(notice.cause ? [notice.cause, ""] : []),
    ...notice.details.map(([name, value]) => `${name}: ${value}`),
    ...(notice.link ? ["", notice.link] : []),
  ].join("\n");
  return {
    message: truncate(notice.subject, 130),
    alias: notice.key,
    description: truncate(description, 15_000),
    priority: priorityOf(notice),
    source: "probe-service",
    entity: truncate(detailOf(notice, "Probe") ?? notice.subject, 512),
    tags: ["probe-service", ...(notice.project ? [truncate(notice.project, 50)] : [])],
    // Details hold 8,000 characters in all: 15 rows of at most 400.
    details: Object.fromEntries([
      ...(notice.cause ? [["Cause", truncate(notice.cause, 400)]] : []),
      ...notice.details.map(([name, value]) => [name, truncate(value, 400)]),
      ...(notice.link ? [["Dashboard", truncate(notice.link, 400)]] : []),
    ]),
  };
}

export const opsgenie = defineProvider({
  kind: "opsgenie",
  label: "Opsgenie",
  description:
    "An alert in Opsgenie (Alert API): created, acknowledged and closed with the incident",
  fields: {
    api_key: secretToken("API key", "The key of an API integration (Settings → Integrations)"),
    url: baseUrl(
      "API URL",
      OPSGENIE_URL,
      `Default ${OPSGENIE_URL}; ${OPSGENIE_EU_URL} for an account in the EU`,
    ),
  },
  request: ({ api_key, url = OPSGENIE_URL }, message) => {
    const notice = noticeOf(message);
    const headers = { authorization: `GenieKey ${api_key}` };
    const action = notice.type === "probe.recovered"
      ? "close"
      : notice.type === "probe.acknowledged"
      ? "acknowledge"
      : null;
    if (action) {
      return {
        transport: "http",
        method: "POST",
        url: endpoint(
          url,
          `/v2/alerts/${encodeURIComponent(notice.key)}/${action}?identifierType=alias`,
        ),
        headers,
        body: JSON.stringify({
          source: "probe-service",
          note: truncate(notice.subject, 25_000),
        }),
      };
    }
    return {
      transport: "http",
      method: "POST",
      url: endpoint(url, "/v2/alerts"),
      headers,
      body: JSON.stringify(alertOf(notice)),
    };
  },
});
