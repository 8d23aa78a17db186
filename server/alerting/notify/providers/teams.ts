/**
 * `teams`: an Adaptive Card message to a Microsoft Teams channel or chat through a Workflows
 * webhook ("Post to a channel when a webhook request is received"). Every text from probes and
 * peers goes in a `TextRun`, which Teams shows as plain text (no Markdown, no `<at>` mentions),
 * cut so the card stays well within Teams' 28 KB. The URL is the credential.
 *
 * @module
 */
import { truncate } from "../formats.ts";
import { noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { secretUrl } from "./fields.ts";

/** A line of plain text runs: `[text, bold?]`. */
const line = (...runs: [string, boolean?][]) => ({
  type: "RichTextBlock",
  inlines: runs.map(([text, bold]) => ({
    type: "TextRun",
    text,
    ...(bold && { weight: "Bolder" }),
  })),
});

export const teams = defineProvider({
  kind: "teams",
  label: "Microsoft Teams",
  description: "An Adaptive Card in a Teams channel or chat, through a Workflows webhook",
  fields: {
    url: secretUrl(
      "Workflows webhook URL",
      "From the Workflows app: Post to a channel when a webhook request is received",
    ),
  },
  request: ({ url }, message) => {
    const notice = noticeOf(message);
    const failing = notice.type === "probe.down" || notice.type === "probe.reminder";
    const card = {
      $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
      type: "AdaptiveCard",
      version: "1.4",
      body: [
        {
          type: "RichTextBlock",
          inlines: [{
            type: "TextRun",
            text: truncate(notice.subject, 512),
            weight: "Bolder",
            size: "Medium",
            ...(failing && { color: "Attention" }),
          }],
        },
        ...(notice.cause ? [line([truncate(notice.cause, 2000)])] : []),
        ...notice.details.map(([name, value]) => line([`${name}: `, true], [truncate(value, 500)])),
      ],
      ...(notice.link && {
        actions: [{ type: "Action.OpenUrl", title: "Open in the dashboard", url: notice.link }],
      }),
    };
    return {
      transport: "http",
      method: "POST",
      url,
      body: JSON.stringify({
        type: "message",
        attachments: [{
          contentType: "application/vnd.microsoft.card.adaptive",
          contentUrl: null,
          content: card,
        }],
      }),
    };
  },
});
