/**
 * `slack`: a Slack incoming-webhook message (`text` and `blocks`, markup escaped: a label's
 * `<!channel>` mentions no one); an I'm alive report is its subject line. The URL is the
 * credential.
 *
 * @module
 */
import { reportSubject } from "../../iam_alive/report.ts";
import { defineProvider, postJson } from "../provider.ts";
import { slackEscape, slackMessage, truncate } from "../formats.ts";
import { secretUrl } from "./fields.ts";

export const slack = defineProvider({
  kind: "slack",
  label: "Slack",
  description: "A Slack incoming webhook",
  fields: {
    url: secretUrl(
      "URL",
      "The incoming webhook URL from Slack (https://hooks.slack.com/services/…). It is the " +
        "credential: after saving, only its host is shown.",
    ),
  },
  request: ({ url }, message) =>
    postJson(
      url,
      message.type === "alert"
        ? slackMessage(message.event)
        : { text: slackEscape(truncate(reportSubject(message.report), 3000)) },
    ),
});
