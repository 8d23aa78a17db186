/**
 * `discord`: a Discord webhook message (`content` and one embed, mentions off); an I'm alive
 * report is its subject line. The URL is the credential.
 *
 * @module
 */
import { reportSubject } from "../../iam_alive/report.ts";
import { defineProvider, postJson } from "../provider.ts";
import { discordMessage, truncate } from "../formats.ts";
import { secretUrl } from "./fields.ts";

export const discord = defineProvider({
  kind: "discord",
  label: "Discord",
  description: "A Discord webhook",
  fields: {
    url: secretUrl(
      "URL",
      "The webhook URL from Discord (https://discord.com/api/webhooks/…). It is the " +
        "credential: after saving, only its host is shown.",
    ),
  },
  request: ({ url }, message) =>
    postJson(
      url,
      message.type === "alert" ? discordMessage(message.event) : {
        content: truncate(reportSubject(message.report), 2000),
        allowed_mentions: { parse: [] },
      },
    ),
});
