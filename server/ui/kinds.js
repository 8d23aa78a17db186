// @ts-check
/**
 * The kinds of probe as the dashboard shows them: which a URL's scheme names, which fields and
 * checks each takes, what its latency measures, and a probe's URL as the form's parts (host,
 * port, name, record type) and back. The interface's rules are `shared/kinds/` (TypeScript, not
 * served to the browser): `server/edge/dashboard_kinds_test.ts` keeps this mirror equal to them.
 */

/**
 * One kind: `name` as `shared/kinds/` has it, `uses` and `expects` its rules, `title` and `tag`
 * how the dashboard names it, `measures` what its latency is, `passes` its rule without
 * assertions, `answer` what `expect.body` reads (a DNS answer: one record per line).
 * @typedef {{
 *   name: "http" | "tcp" | "tls" | "dns",
 *   title: string,
 *   tag: string,
 *   schemes: readonly string[],
 *   uses: { method: boolean, headers: boolean, body: boolean },
 *   expects: readonly ("status" | "body" | "json" | "headers" | "certificate_days")[],
 *   measures: string,
 *   passes: string,
 *   answer: string,
 * }} Kind
 */

/** @type {readonly Kind[]} */
export const KINDS = [
  {
    name: "http",
    title: "HTTP(S)",
    tag: "HTTP",
    schemes: ["http:", "https:"],
    uses: { method: true, headers: true, body: true },
    expects: ["status", "body", "json", "headers", "certificate_days"],
    measures: "response time",
    passes: "a status below 400",
    answer: "body",
  },
  {
    name: "tcp",
    title: "TCP",
    tag: "TCP",
    schemes: ["tcp:"],
    uses: { method: false, headers: false, body: true },
    expects: ["body"],
    measures: "connect time",
    passes: "an accepted connection",
    answer: "answer",
  },
  {
    name: "tls",
    title: "TLS",
    tag: "TLS",
    schemes: ["tls:"],
    uses: { method: false, headers: false, body: true },
    expects: ["body", "certificate_days"],
    measures: "handshake time",
    passes: "a TLS handshake with a valid certificate",
    answer: "answer",
  },
  {
    name: "dns",
    title: "DNS",
    tag: "DNS",
    schemes: ["dns:"],
    uses: { method: false, headers: false, body: false },
    expects: ["body", "json"],
    measures: "query time",
    passes: "an answer with records",
    answer: "answer",
  },
];

/** The record types a DNS probe may ask for (`shared/kinds/dns.ts`). */
export const DNS_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT", "NS"];

const HTTP = KINDS[0];

/**
 * The kind a probe's URL names by its scheme; HTTP for anything else (a URL being typed).
 * @param {string} url
 * @returns {Kind}
 */
export function kindOf(url) {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:)/.exec(url)?.[1].toLowerCase();
  return KINDS.find((k) => scheme !== undefined && k.schemes.includes(scheme)) ?? HTTP;
}

/**
 * A kind by its name.
 * @param {string} name
 * @returns {Kind}
 */
export const kindNamed = (name) => KINDS.find((k) => k.name === name) ?? HTTP;

/**
 * The form's parts of a `tcp://`, `tls://` or `dns://` URL: its host (without brackets), port
 * (empty for DNS's default 53), and for DNS the name queried and the record type.
 * @typedef {{ host: string, port: string, name: string, type: string }} UrlParts
 */

/**
 * A stored URL of a kind other than HTTP as the form's parts; empty parts for anything else.
 * @param {string} url
 * @returns {UrlParts}
 */
export function urlParts(url) {
  const empty = { host: "", port: "", name: "", type: "A" };
  if (kindOf(url) === HTTP || !URL.canParse(url)) return empty;
  const u = new URL(url);
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port,
    name: decodeURIComponent(u.pathname.slice(1)),
    type: u.searchParams.get("type") ?? "A",
  };
}

/**
 * The URL the form's parts stand for, sent as typed for the API to judge (an empty port stays
 * empty: the API says a port is needed). An IPv6 address is bracketed.
 * @param {Kind} kind
 * @param {UrlParts} parts
 */
export function urlOf(kind, { host, port, name, type }) {
  const h = host.trim();
  const where = `${h.includes(":") && !h.startsWith("[") ? `[${h}]` : h}${
    port.trim() === "" ? "" : `:${port.trim()}`
  }`;
  if (kind.name === "dns") return `dns://${where}/${name.trim()}?type=${type}`;
  return `${kind.name}://${where}`;
}

/**
 * Which of the form's parts an API message about the URL is about (`must name a port` is the
 * port's), so the message is shown there and focus goes to it.
 * @param {string} message
 * @returns {keyof UrlParts}
 */
export function urlPartAt(message) {
  if (/\bport\b/i.test(message)) return "port";
  if (/\btype\b/i.test(message)) return "type";
  if (/\bdomain\b/i.test(message)) return "name";
  return "host";
}
