/**
 * `mail`: one plain-text mail to the target's recipients, through the server's SMTP settings
 * (`SMTP_URL`, `MAIL_FROM`): the subject line, the details, then the JSON.
 *
 * @module
 */
import { renderReportText, reportSubject } from "../../iam_alive/report.ts";
import { defineProvider } from "../provider.ts";
import { mailMessage } from "../formats.ts";
import { recipients } from "./fields.ts";

export const mail = defineProvider({
  kind: "mail",
  label: "Mail",
  description: "Plain-text mail through the server's SMTP_URL, from MAIL_FROM (both must be set)",
  fields: { recipients },
  request: ({ recipients: to }, message) => ({
    transport: "mail",
    to,
    ...(message.type === "alert" ? mailMessage(message.event) : {
      subject: reportSubject(message.report),
      text: renderReportText(message.report),
    }),
  }),
});
