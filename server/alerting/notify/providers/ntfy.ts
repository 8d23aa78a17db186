/**
 * `ntfy`: a message published to an ntfy topic (`POST` to the topic's URL): the details as the
 * plain-text body (within ntfy's 4,096 bytes, beyond which it would become an attachment), the
 * subject as `Title` (RFC 2047-encoded when not ASCII, as ntfy reads it), `Priority` urgent for a
 * probe down, `Tags` (an emoji and the project), `Click` to the probe's page. The topic URL is
 * the credential on a public server (whoever knows the topic reads and writes it); an access
 * token, when the topic is protected, is sent as `Authorization: Bearer`.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { truncate } from "../formats.ts";
import { oneLine, truncateBytes } from "../markup.ts";
import { type Notice, noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { secretUrl } from "./fields.ts";
import { maskToken, tokenText } from "./vendor_fields.ts";

/** ntfy's priorities by event: urgent (5) down, high (4) still down, low (2) a test. */
const PRIORITIES: Record<Notice["type"], string> = {
  "probe.down": "urgent",
  "probe.reminder": "high",
  "probe.degraded": "default",
  "probe.recovered": "default",
  "probe.acknowledged": "default",
  "probe.flapping": "default",
  "target.test": "low",
  iam_alive: "low",
};

/** An emoji (by its ntfy tag) by event. */
const EMOJI: Record<Notice["type"], string> = {
  "probe.down": "rotating_light",
  "probe.reminder": "rotating_light",
  "probe.degraded": "warning",
  "probe.recovered": "white_check_mark",
  "probe.acknowledged": "eyes",
  "probe.flapping": "warning",
  "target.test": "test_tube",
  iam_alive: "heartbeat",
};

/** A header's value as ntfy reads it: ASCII as is, anything else an RFC 2047 encoded word. */
function headerText(text: string): string {
  const line = oneLine(text);
  return /^[\x20-\x7e]*$/.test(line)
    ? line
    : `=?UTF-8?B?${Buffer.from(line, "utf8").toString("base64")}?=`;
}

export const ntfy = defineProvider({
  kind: "ntfy",
  label: "ntfy",
  description: "A push notification through an ntfy topic",
  fields: {
    url: secretUrl("Topic URL", "https://ntfy.sh/your-topic, or a topic on your own server"),
    token: {
      schema: tokenText,
      secret: { mask: maskToken },
      form: {
        label: "Access token",
        input: "secret",
        help: "tk_…, for a protected topic; leave empty for a public one",
      },
    },
  },
  request: ({ url, token }, message) => {
    const notice = noticeOf(message);
    const body = [
      ...(notice.cause ? [notice.cause] : []),
      ...notice.details.map(([name, value]) => `${name}: ${value}`),
    ].join("\n");
    const tags = [EMOJI[notice.type], ...(notice.project ? [notice.project] : [])];
    return {
      transport: "http",
      method: "POST",
      url,
      headers: {
        "content-type": "text/plain; charset=utf-8",
        title: headerText(truncate(notice.subject, 250)),
        priority: PRIORITIES[notice.type],
        tags: headerText(tags.join(",")),
        ...(notice.link && { click: notice.link }),
        ...(token && { authorization: `Bearer ${token}` }),
      },
      body: truncateBytes(body || notice.subject, 4096),
    };
  },
});
