/**
 * `gotify`: a message to a Gotify server (`POST /message`, the application's token in
 * `X-Gotify-Key`): title, the details as plain text, a priority (8, which Gotify's Android app
 * shows as a pop-up, for a probe down), the probe's page to open on a click. The application
 * token is the credential.
 *
 * @module
 */
import { truncate } from "../formats.ts";
import { type Notice, noticeOf, plainLines } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { endpoint, secretToken, serverUrl } from "./vendor_fields.ts";

const PRIORITIES: Record<Notice["type"], number> = {
  "probe.down": 8,
  "probe.reminder": 8,
  "probe.degraded": 5,
  "probe.recovered": 5,
  "probe.acknowledged": 4,
  "probe.flapping": 5,
  "target.test": 2,
  iam_alive: 2,
};

export const gotify = defineProvider({
  kind: "gotify",
  label: "Gotify",
  description: "A push notification through a Gotify server",
  fields: {
    url: serverUrl("Server URL", "Your Gotify server, https://gotify.example.com"),
    token: secretToken("Application token", "The token of an application (Apps → Create)"),
  },
  request: ({ url, token }, message) => {
    const notice = noticeOf(message);
    return {
      transport: "http",
      method: "POST",
      url: endpoint(url, "/message"),
      headers: { "x-gotify-key": token },
      body: JSON.stringify({
        title: truncate(notice.subject, 250),
        message: truncate(plainLines(notice).slice(1).join("\n") || notice.subject, 8000),
        priority: PRIORITIES[notice.type],
        extras: {
          // Shown as written: never read as Markdown.
          "client::display": { contentType: "text/plain" },
          ...(notice.link && { "client::notification": { click: { url: notice.link } } }),
        },
      }),
    };
  },
});
