/**
 * `telegram`: a Telegram bot's `sendMessage` with `parse_mode` HTML: the subject in bold, the
 * cause, the details, a link to the probe's page. Every text from probes and peers is escaped
 * for Telegram's HTML (`&`, `<`, `>`, `"`), so a label holding `<b>` reads as written, and cut so
 * the message stays within Telegram's 4,096 characters. The bot token is the credential (it is
 * part of the request's path); the URL is the Bot API's unless a local Bot API server is used.
 *
 * @module
 */
import { z } from "zod";
import { truncate } from "../formats.ts";
import { escapeHtml } from "../markup.ts";
import { noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { bodyRetryAfter } from "./vendor_answers.ts";
import { baseUrl, endpoint, secretToken, textSetting } from "./vendor_fields.ts";

export const TELEGRAM_API_URL = "https://api.telegram.org";

const botToken = z.string().regex(
  /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/,
  "must be a bot token as BotFather gives it: digits, a colon, then letters, digits, _ or -",
);
const chatId = z.string().regex(
  /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/,
  "must be a chat's numeric id (-100… for a channel or supergroup) or a public @channelname",
);

export const telegram = defineProvider({
  kind: "telegram",
  label: "Telegram",
  description: "A message from a Telegram bot to a chat, group or channel",
  fields: {
    bot_token: secretToken("Bot token", "123456789:AA… from @BotFather", botToken),
    chat_id: textSetting(
      "Chat id",
      "The chat, group or channel the bot posts to: -100… or @channelname",
      chatId,
    ),
    url: baseUrl("Bot API URL", TELEGRAM_API_URL),
  },
  request: ({ bot_token, chat_id, url = TELEGRAM_API_URL }, message) => {
    const notice = noticeOf(message);
    // Cut, then escaped: an entity is never cut in half, and what shows stays under 4,096.
    const lines = [
      `<b>${escapeHtml(truncate(notice.subject, 256))}</b>`,
      ...(notice.cause ? [escapeHtml(truncate(notice.cause, 512))] : []),
      ...(notice.details.length > 0 ? [""] : []),
      ...notice.details.map(([name, value]) =>
        `<b>${escapeHtml(name)}:</b> ${escapeHtml(truncate(value, 150))}`
      ),
      ...(notice.link
        ? ["", `<a href="${escapeHtml(notice.link)}">Open in the dashboard</a>`]
        : []),
    ];
    return {
      transport: "http",
      method: "POST",
      url: endpoint(url, `/bot${bot_token}/sendMessage`),
      body: JSON.stringify({
        chat_id,
        text: lines.join("\n"),
        parse_mode: "HTML",
        link_preview_options: { is_disabled: true },
      }),
    };
  },
  // A 429 says how long to wait in its body (`{"ok":false,"parameters":{"retry_after":N}}`).
  answer: bodyRetryAfter((body) => {
    const seconds = (body as { parameters?: { retry_after?: unknown } } | null)?.parameters
      ?.retry_after;
    return typeof seconds === "number" ? seconds * 1000 : undefined;
  }),
});
