/**
 * `matrix`: an `m.room.message` (`m.text`) in a room, through the client-server API of the
 * target's homeserver: a plain `body` and an HTML `formatted_body`, every text escaped for HTML
 * and its mentions defused (`@room` notifies no one; `m.mentions` is empty too, for servers that
 * read it). The message is PUT under a transaction id, the message's own: a retry after a lost
 * answer is the same event, not a second one. The access token (of the bot's account) is the
 * credential.
 *
 * @module
 */
import { z } from "zod";
import { truncate } from "../formats.ts";
import { defuseMentions, escapeHtml } from "../markup.ts";
import { noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { bodyRetryAfter } from "./vendor_answers.ts";
import { endpoint, secretToken, serverUrl, textSetting } from "./vendor_fields.ts";

const roomId = z.string().regex(
  /^![\x21-\x39\x3b-\x7e]{1,250}:[\x21-\x7e]{1,250}$/,
  "must be a room id, !abc123:example.org (Room settings → Advanced)",
);

export const matrix = defineProvider({
  kind: "matrix",
  label: "Matrix",
  description: "A message in a Matrix room, sent by a bot account",
  fields: {
    url: serverUrl("Homeserver URL", "The bot account's homeserver, https://matrix.example.org"),
    access_token: secretToken("Access token", "The bot account's access token"),
    room_id: textSetting("Room id", "!abc123:example.org; the bot must have joined it", roomId),
  },
  request: ({ url, access_token, room_id }, message) => {
    const notice = noticeOf(message);
    const subject = defuseMentions(truncate(notice.subject, 512));
    const cause = notice.cause && defuseMentions(truncate(notice.cause, 2000));
    const details = notice.details.map(([name, value]) =>
      [name, defuseMentions(truncate(value, 500))] as const
    );
    const body = [
      subject,
      ...(cause ? [cause] : []),
      ...details.map(([name, value]) => `${name}: ${value}`),
      ...(notice.link ? [notice.link] : []),
    ].join("\n");
    const html = [
      `<p><strong>${escapeHtml(subject)}</strong></p>`,
      ...(cause ? [`<p>${escapeHtml(cause)}</p>`] : []),
      ...(details.length > 0
        ? [
          `<ul>${
            details.map(([name, value]) =>
              `<li><strong>${escapeHtml(name)}:</strong> ${escapeHtml(value)}</li>`
            ).join("")
          }</ul>`,
        ]
        : []),
      ...(notice.link
        ? [`<p><a href="${escapeHtml(notice.link)}">Open in the dashboard</a></p>`]
        : []),
    ].join("");
    const room = encodeURIComponent(room_id);
    const txn = encodeURIComponent(message.id);
    return {
      transport: "http",
      method: "PUT",
      url: endpoint(url, `/_matrix/client/v3/rooms/${room}/send/m.room.message/${txn}`),
      headers: { authorization: `Bearer ${access_token}` },
      body: JSON.stringify({
        msgtype: "m.text",
        body,
        format: "org.matrix.custom.html",
        formatted_body: html,
        "m.mentions": {},
      }),
    };
  },
  // A 429 (`M_LIMIT_EXCEEDED`) may say how long to wait in its body rather than a header.
  answer: bodyRetryAfter((body) => (body as { retry_after_ms?: unknown } | null)?.retry_after_ms),
});
