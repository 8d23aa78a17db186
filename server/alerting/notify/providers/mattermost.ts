/**
 * `mattermost`: a Mattermost incoming-webhook post (`text`, Markdown): the subject in bold, the
 * cause, the details as a list, a link to the probe's page. Every text from probes and peers has
 * its Markdown escaped and its mentions defused (`@channel`, `@all`, `@here`, `@someone` notify no
 * one), and the post stays within Mattermost's 16,383 characters. The URL is the credential.
 *
 * @module
 */
import { truncate } from "../formats.ts";
import { defuseMentions, escapeMarkdown } from "../markup.ts";
import { noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { secretUrl } from "./fields.ts";

/** Text as data in a post: cut, mentions broken, Markdown escaped. */
const inert = (text: string, max: number) => escapeMarkdown(defuseMentions(truncate(text, max)));

/** A link target Markdown cannot misread: its parentheses and spaces percent-encoded. */
const linkTarget = (url: string) =>
  url.replaceAll("(", "%28").replaceAll(")", "%29").replaceAll(" ", "%20");

export const mattermost = defineProvider({
  kind: "mattermost",
  label: "Mattermost",
  description: "A post through a Mattermost incoming webhook",
  fields: { url: secretUrl("Incoming webhook URL", "https://mattermost.example.com/hooks/…") },
  request: ({ url }, message) => {
    const notice = noticeOf(message);
    // Escaping at most doubles a text: 16,383 holds a subject, a cause and 15 details so cut.
    const text = [
      `**${inert(notice.subject, 512)}**`,
      ...(notice.cause ? [inert(notice.cause, 2000)] : []),
      ...(notice.details.length > 0 ? [""] : []),
      ...notice.details.map(([name, value]) => `- **${name}:** ${inert(value, 400)}`),
      ...(notice.link ? ["", `[Open in the dashboard](${linkTarget(notice.link)})`] : []),
    ].join("\n");
    return { transport: "http", method: "POST", url, body: JSON.stringify({ text }) };
  },
});
