/**
 * Text from probes, projects and peers made inert for a vendor's markup: HTML (Telegram, Matrix,
 * Google Chat's card texts), Markdown (Mattermost) and mentions (`@channel`, `@everyone`,
 * `@room`). Escape after cutting to a limit, so an escape (`&amp;`, `\*`) is never cut in half.
 *
 * @module
 */

/** HTML's special characters as entities: text, never tags, and safe in a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}

/** Markdown's punctuation, each escaped with a backslash (CommonMark reads it as the character). */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~=&:]/g, (c) => `\\${c}`);
}

/**
 * Mentions (`@channel`, `@here`, `@all`, `@everyone`, `@room`, `@someone`) broken with a word
 * joiner after the `@`: they read the same and notify no one.
 */
export function defuseMentions(text: string): string {
  return text.replace(/@(?=[\p{L}\p{N}_])/gu, "@\u2060");
}

/** One line: control characters (a newline in a label) as one space. */
export function oneLine(text: string): string {
  return text.replace(/\p{Cc}+/gu, " ");
}

/** Cut to at most `max` UTF-8 bytes, code points whole, the cut marked. */
export function truncateBytes(text: string, max: number): string {
  const encoder = new TextEncoder();
  if (encoder.encode(text).length <= max) return text;
  let bytes = 3; // the mark
  let end = 0;
  for (const c of text) {
    const size = encoder.encode(c).length;
    if (bytes + size > max) break;
    bytes += size;
    end += c.length;
  }
  return `${text.slice(0, end)}…`;
}
