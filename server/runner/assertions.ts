/**
 * Judging a response by a probe's `expect`: pure, no I/O. Failed checks are values,
 * each with what was expected and, truncated and never secret, what was seen.
 *
 * @module
 */
import type {
  AssertionValue,
  FailedCheck,
  HeaderExpect,
  JsonExpect,
  ProbeExpect,
} from "@probe/shared";
import { isSecretHeader, MAX_SEEN_LENGTH, REDACTED } from "@probe/shared/rules";

/** What a run saw of the final hop's response (or, for other kinds, of what answered). */
export interface Observed {
  /** The HTTP status; null for a kind without one (no status check is made). */
  status: number | null;
  /** Response headers by lower-cased name. */
  headers: Readonly<Record<string, string>>;
  /** The first 1 MiB of the body as text (invalid UTF-8 replaced); null when it was not read. */
  body: string | null;
  /**
   * The body as `json` checks see it, when the caller parsed it already (`parseJsonBody`);
   * otherwise `evaluate` parses `body`, once for all the checks.
   */
  json?: JsonBody;
  /** For https, when the peer certificate expires (null: unreadable); null for http. */
  certificate: { validTo: Date | null } | null;
  /** When the run started (ms), for the certificate's remaining days. */
  now: number;
}

/** Longest excerpt of the body shown as `seen`. */
export const MAX_BODY_EXCERPT = 80;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether the body must be read and kept to judge a run. */
export function needsBody(expect: ProbeExpect | null): boolean {
  return !!expect &&
    ((expect.body?.contains?.length ?? 0) + (expect.body?.not_contains?.length ?? 0) +
        (expect.json?.length ?? 0)) > 0;
}

// Line breaks and tabs read as spaces; other C0 controls and DEL (a NUL would not survive
// PostgreSQL text) as U+FFFD.
const BREAKS = /[\t\n\r]/g;
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** At most `max` characters, cut on a code point, "…" marking a cut; no control characters. */
export function truncate(text: string, max: number = MAX_SEEN_LENGTH): string {
  const clean = text.replace(BREAKS, " ").replace(CONTROL, "\ufffd");
  if (clean.length <= max) return clean;
  let end = max - 1;
  // Not between the halves of a surrogate pair: a lone half has no UTF-8 form.
  const code = clean.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${clean.slice(0, end)}…`;
}

/** A short excerpt of the body around `at` (its start by default), at most 80 characters. */
function excerpt(body: string, at = 0, length = 0): string {
  if (body.length === 0) return "empty body";
  const room = Math.max(0, MAX_BODY_EXCERPT - length);
  let start = Math.max(0, at - Math.floor(room / 2));
  // Not between the halves of a surrogate pair.
  const code = body.charCodeAt(start);
  if (start > 0 && code >= 0xdc00 && code <= 0xdfff) start--;
  const lead = start > 0 ? "…" : "";
  return truncate(lead + body.slice(start, start + MAX_BODY_EXCERPT + 1), MAX_BODY_EXCERPT);
}

const quoted = (value: AssertionValue) => truncate(JSON.stringify(value), 100);

function statusChecks(expect: ProbeExpect, status: number): FailedCheck[] {
  if (!expect.status) {
    return status < 400 ? [] : [{ check: "status", expected: "below 400", seen: String(status) }];
  }
  const group = `${Math.floor(status / 100)}xx`;
  if (expect.status.some((entry) => entry === status || entry === group)) return [];
  return [{
    check: "status",
    expected: truncate(`one of ${expect.status.join(", ")}`),
    seen: String(status),
  }];
}

function bodyChecks(expect: ProbeExpect, body: string): FailedCheck[] {
  const failed: FailedCheck[] = [];
  expect.body?.contains?.forEach((text, i) => {
    if (!body.includes(text)) {
      failed.push({
        check: `body.contains.${i}`,
        expected: `body contains ${quoted(text)}`,
        seen: excerpt(body),
      });
    }
  });
  expect.body?.not_contains?.forEach((text, i) => {
    const at = body.indexOf(text);
    if (at !== -1) {
      failed.push({
        check: `body.not_contains.${i}`,
        expected: `body does not contain ${quoted(text)}`,
        seen: excerpt(body, at, text.length),
      });
    }
  });
  return failed;
}

const MISSING = Symbol("missing");

/** The tokens of an RFC 6901 pointer, unescaped (`~1` is `/`, then `~0` is `~`). */
export function pointerTokens(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map((t) => t.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** The value at a pointer, or MISSING. Array indexes are decimal without leading zeros. */
export function resolvePointer(document: unknown, pointer: string): unknown {
  let at: unknown = document;
  for (const token of pointerTokens(pointer)) {
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return MISSING;
      const index = Number(token);
      if (index >= at.length) return MISSING;
      at = at[index];
    } else if (at !== null && typeof at === "object") {
      // JSON.parse makes `__proto__` an own key; inherited names are not members.
      if (!Object.hasOwn(at, token)) return MISSING;
      at = (at as Record<string, unknown>)[token];
    } else {
      return MISSING;
    }
  }
  return at;
}

const isScalar = (value: unknown) =>
  value === null || ["string", "number", "boolean"].includes(typeof value);

/** Whether a JSON value found at a path satisfies `op value`; never called for MISSING. */
function jsonHolds(found: unknown, { op, value }: JsonExpect): boolean {
  switch (op) {
    case "exists":
      return true;
    case "not_exists":
      return false;
    case "eq":
      return isScalar(found) && found === value;
    case "ne":
      return !(isScalar(found) && found === value);
    case "lt":
      return typeof found === "number" && found < (value as number);
    case "le":
      return typeof found === "number" && found <= (value as number);
    case "gt":
      return typeof found === "number" && found > (value as number);
    case "ge":
      return typeof found === "number" && found >= (value as number);
    case "contains":
      if (typeof found === "string") return typeof value === "string" && found.includes(value);
      if (Array.isArray(found)) return found.some((item) => isScalar(item) && item === value);
      return false;
  }
}

/**
 * How deeply arrays and objects may nest in a body judged by `json` checks. Past it the body is
 * not parsed: every `json` check fails with `seen` saying so (docs/assertions.md). Real
 * documents nest a few levels; a hostile one nests hundreds of thousands, which costs the parse
 * (and anything that walks the value) time and stack.
 */
export const MAX_JSON_DEPTH = 64;

/** A body as `json` checks see it: parsed once per run (`parseJsonBody`). */
export type JsonBody =
  | { ok: true; value: unknown }
  | { ok: false; seen: string };

const NOT_JSON: JsonBody = { ok: false, seen: "body is not JSON" };
const TOO_DEEP: JsonBody = {
  ok: false,
  seen: `JSON nested deeper than ${MAX_JSON_DEPTH} levels: not parsed`,
};

const OPEN_BRACKET = 0x5b, CLOSE_BRACKET = 0x5d, OPEN_BRACE = 0x7b, CLOSE_BRACE = 0x7d;
const QUOTE = 0x22, BACKSLASH = 0x5c;

/**
 * Whether `text`'s arrays and objects nest at most `max` levels, counting brackets and braces
 * outside strings. One pass with no allocation, stopping at the first level too deep: a cheap
 * guard before `JSON.parse`, whose time and memory grow with the nesting. Text that is not JSON
 * may pass; the parse then refuses it.
 */
export function nestsAtMost(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACKET || c === OPEN_BRACE) {
      if (++depth > max) return false;
    } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      depth--;
    }
  }
  return true;
}

/**
 * The body parsed as JSON, once for all of a run's `json` checks: the value, or why there is
 * none (not JSON, cut by the 1 MiB limit, or nested deeper than `MAX_JSON_DEPTH`). Never throws.
 */
export function parseJsonBody(body: string | null): JsonBody {
  if (body === null || !nestsAtMost(body)) return body === null ? NOT_JSON : TOO_DEEP;
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return NOT_JSON;
  }
}

/**
 * A JSON rendering of `value` of at most `max` characters (more is cut, the caller marks it),
 * built by a walk that stops once it has `max`: a large value is never serialised whole.
 */
export function jsonPreview(value: unknown, max: number = MAX_BODY_EXCERPT): string {
  let out = "";
  const full = () => out.length > max;
  const walk = (v: unknown): void => {
    if (full()) return;
    if (typeof v === "string") {
      out += JSON.stringify(v.slice(0, max + 1));
    } else if (Array.isArray(v)) {
      out += "[";
      for (let i = 0; i < v.length && !full(); i++) {
        if (i > 0) out += ",";
        walk(v[i]);
      }
      out += "]";
    } else if (v !== null && typeof v === "object") {
      out += "{";
      let first = true;
      for (const key in v) {
        if (full()) break;
        if (!Object.hasOwn(v, key)) continue;
        out += `${first ? "" : ","}${JSON.stringify(key.slice(0, max + 1))}:`;
        first = false;
        walk((v as Record<string, unknown>)[key]);
      }
      out += "}";
    } else {
      out += JSON.stringify(v) ?? "null";
    }
  };
  walk(value);
  return out.length > max ? out.slice(0, max + 1) : out;
}

function jsonChecks(expect: ProbeExpect, json: () => JsonBody): FailedCheck[] {
  if (!expect.json?.length) return [];
  const parsed = json();
  const failed: FailedCheck[] = [];
  expect.json.forEach((item, i) => {
    const where = item.path === "" ? "(root)" : item.path;
    const expected = truncate(
      item.value === undefined
        ? `${where} ${item.op}`
        : `${where} ${item.op} ${quoted(item.value)}`,
    );
    const fail = (seen: string) => failed.push({ check: `json.${i}`, expected, seen });
    if (!parsed.ok) return fail(parsed.seen);
    const found = resolvePointer(parsed.value, item.path);
    if (found === MISSING) {
      if (item.op !== "not_exists") fail("missing");
      return;
    }
    if (!jsonHolds(found, item)) fail(truncate(jsonPreview(found), MAX_BODY_EXCERPT));
  });
  return failed;
}

function headerHolds(found: string | undefined, { op, value }: HeaderExpect): boolean {
  switch (op) {
    case "exists":
      return found !== undefined;
    case "not_exists":
      return found === undefined;
    case "eq":
      return found === value;
    case "contains":
      return found !== undefined && found.includes(value as string);
  }
}

function headerChecks(expect: ProbeExpect, headers: Observed["headers"]): FailedCheck[] {
  const failed: FailedCheck[] = [];
  expect.headers?.forEach((item, i) => {
    const name = item.name.toLowerCase();
    const found = Object.hasOwn(headers, name) ? headers[name] : undefined;
    if (headerHolds(found, item)) return;
    const secret = isSecretHeader(name);
    const value = item.value === undefined
      ? ""
      : ` ${secret ? REDACTED : quoted(item.value as string)}`;
    failed.push({
      check: `headers.${i}`,
      expected: truncate(`${name} ${item.op}${value}`),
      seen: found === undefined ? "missing" : secret ? REDACTED : truncate(found),
    });
  });
  return failed;
}

function certificateChecks(expect: ProbeExpect, observed: Observed): FailedCheck[] {
  const days = expect.certificate_days;
  if (days === undefined) return [];
  const expected = `certificate valid for at least ${days} more days`;
  const fail = (seen: string) => [{ check: "certificate_days", expected, seen }];
  if (observed.certificate === null) return fail("no certificate: the final hop was http");
  const { validTo } = observed.certificate;
  if (validTo === null) return fail("the certificate could not be read");
  if (validTo.getTime() >= observed.now + days * DAY_MS) return [];
  const left = Math.floor((validTo.getTime() - observed.now) / DAY_MS);
  return fail(
    left < 0
      ? `expired on ${validTo.toISOString()}`
      : `expires on ${validTo.toISOString()}, in ${left} days`,
  );
}

/**
 * The assertions of `expect` that `observed` fails, in the order of `expect`'s fields; empty
 * when all pass. Without a `status` list the default rule (below 400) is checked as `status`.
 */
export function evaluate(expect: ProbeExpect, observed: Observed): FailedCheck[] {
  const body = observed.body ?? "";
  return [
    ...(observed.status === null ? [] : statusChecks(expect, observed.status)),
    ...bodyChecks(expect, body),
    ...jsonChecks(expect, () => observed.json ?? parseJsonBody(observed.body)),
    ...headerChecks(expect, observed.headers),
    ...certificateChecks(expect, observed),
  ];
}
