/**
 * `google_chat`: a card message (`cardsV2`) to a Google Chat space through its incoming webhook:
 * the subject as the card's title, the cause and the details as widgets, a button to the probe's
 * page. Card texts read a little HTML, so every text from probes and peers is escaped for it; no
 * `text` is sent, the only place `<users/all>` would mention anyone. The message stays within
 * Chat's 32,000 bytes. The URL (its `key` and `token`) is the credential.
 *
 * @module
 */
import { truncate } from "../formats.ts";
import { escapeHtml } from "../markup.ts";
import { noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { secretUrl } from "./fields.ts";

export const googleChat = defineProvider({
  kind: "google_chat",
  label: "Google Chat",
  description: "A card message in a Google Chat space, through its webhook",
  fields: {
    url: secretUrl(
      "Webhook URL",
      "https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=… (Apps & integrations → Webhooks)",
    ),
  },
  request: ({ url }, message) => {
    const notice = noticeOf(message);
    const widgets = [
      ...(notice.cause
        ? [{ textParagraph: { text: escapeHtml(truncate(notice.cause, 2000)) } }]
        : []),
      ...notice.details.map(([name, value]) => ({
        decoratedText: { topLabel: name, text: escapeHtml(truncate(value, 500)), wrapText: true },
      })),
      ...(notice.link
        ? [{
          buttonList: {
            buttons: [{
              text: "Open in the dashboard",
              onClick: { openLink: { url: notice.link } },
            }],
          },
        }]
        : []),
    ];
    const card = {
      // The header's title is not formatted: cut, not escaped.
      header: {
        title: truncate(notice.subject, 200),
        ...(notice.project && { subtitle: "probe-service" }),
      },
      // A section holds at least one widget.
      sections: [{
        widgets: widgets.length > 0
          ? widgets
          : [{ textParagraph: { text: escapeHtml(truncate(notice.subject, 2000)) } }],
      }],
    };
    return {
      transport: "http",
      method: "POST",
      url,
      headers: { "content-type": "application/json; charset=UTF-8" },
      body: JSON.stringify({ cardsV2: [{ cardId: notice.type.replace(".", "-"), card }] }),
    };
  },
});
