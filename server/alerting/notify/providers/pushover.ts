/**
 * `pushover`: a Pushover message (`POST /1/messages.json`): title, the details as plain text
 * (within Pushover's 1,024 characters), the probe's page as its supplementary URL. A probe down
 * is an emergency (priority 2), repeated every 60 s until acknowledged in the app or for an hour;
 * a reminder is high priority, the rest normal, a test quiet. The application token is the
 * credential; the user key names who (or which group) gets it.
 *
 * @module
 */
import { z } from "zod";
import { truncate } from "../formats.ts";
import { type Notice, noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { baseUrl, endpoint, secretToken, textSetting } from "./vendor_fields.ts";

export const PUSHOVER_URL = "https://api.pushover.net";
/** An emergency's repeat (at least 30 s) and how long it repeats (at most 3 h). */
export const EMERGENCY_RETRY_S = 60;
export const EMERGENCY_EXPIRE_S = 3600;

const pushoverKey = z.string().regex(/^[A-Za-z0-9]{30}$/, "must be 30 letters and digits");

const PRIORITIES: Record<Notice["type"], number> = {
  "probe.down": 2,
  "probe.reminder": 1,
  "probe.degraded": 0,
  "probe.recovered": 0,
  "probe.acknowledged": 0,
  "probe.flapping": 0,
  "target.test": -1,
  iam_alive: -1,
};

export const pushover = defineProvider({
  kind: "pushover",
  label: "Pushover",
  description: "A push notification through Pushover; an emergency when a probe is down",
  fields: {
    token: secretToken("Application token", "Your application's API token", pushoverKey),
    user: textSetting("User key", "The user's or group's key", pushoverKey),
    url: baseUrl("API URL", PUSHOVER_URL),
  },
  request: ({ token, user, url = PUSHOVER_URL }, message) => {
    const notice = noticeOf(message);
    const priority = PRIORITIES[notice.type];
    const text = [
      ...(notice.cause ? [notice.cause] : []),
      ...notice.details.map(([name, value]) => `${name}: ${value}`),
    ].join("\n") || notice.subject;
    const form = new URLSearchParams({
      token,
      user,
      title: truncate(notice.subject, 250),
      message: truncate(text, 1024),
      priority: String(priority),
      timestamp: String(Math.floor(Date.parse(notice.at) / 1000)),
      ...(priority === 2 && {
        retry: String(EMERGENCY_RETRY_S),
        expire: String(EMERGENCY_EXPIRE_S),
      }),
      ...(notice.link && {
        url: truncate(notice.link, 512),
        url_title: "Open in the dashboard",
      }),
    });
    return {
      transport: "http",
      method: "POST",
      url: endpoint(url, "/1/messages.json"),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    };
  },
});
