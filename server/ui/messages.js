// @ts-check
/**
 * The API's validation messages as a person reads them. The API answers each field at fault as
 * `{ path, message }`, the message in the words of its validator ("Too small: expected number to
 * be >=1"); the dashboard shows "Must be at least 1" beside the field `path` names, and names the
 * field in words where it shows the message away from it ("Interval: must be at least 10").
 */
import { JSON_OPS, opWords } from "./check_words.js";

/**
 * Readable names of the fields the API names in `details[].path`, part by part.
 * @type {Record<string, string>}
 */
const FIELD_NAMES = {
  url: "URL",
  method: "method",
  label: "label",
  description: "description",
  project: "name",
  latency: "expected latency",
  interval_seconds: "interval",
  timeout_ms: "timeout",
  headers: "headers",
  body: "request body",
  expect: "assertions",
  status: "status codes",
  contains: "body must contain",
  not_contains: "body must not contain",
  json: "JSON check",
  path: "JSON pointer",
  op: "check",
  value: "value",
  name: "name",
  certificate_days: "certificate days",
  window: "window",
  limit: "limit",
  before: "before",
};

/**
 * What a type is called in a sentence.
 * @type {Record<string, string>}
 */
const TYPES = {
  number: "a number",
  int: "a whole number",
  string: "text",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  null: "empty",
};

/** @param {string} text */
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * A sentence to follow another (after `;` or `:`): its first letter small.
 * @param {string} text
 */
export const lowerFirst = (text) => text.charAt(0).toLowerCase() + text.slice(1);

/**
 * `5 characters`, `1 character`.
 * @param {string | number} n
 * @param {string} one
 */
const countOf = (n, one) => `${n} ${one}${Number(n) === 1 ? "" : "s"}`;

/**
 * One rule: a pattern of the validator's message and the sentence made of its groups.
 * @type {[RegExp, (...match: string[]) => string][]}
 */
const RULES = [
  [
    /^Too small: expected (\w+) to (?:be|have) (>=|>)(-?[\d.]+)(?: (characters|items))?$/,
    (_m, type, op, n) => {
      if (type === "string") {
        return n === "1" && op === ">="
          ? "Must not be empty"
          : `Must be at least ${countOf(op === ">" ? Number(n) + 1 : n, "character")} long`;
      }
      if (type === "array") {
        return n === "1" && op === ">="
          ? "Must have at least one entry"
          : `Must have at least ${
            countOf(op === ">" ? Number(n) + 1 : n, "entry").replace("entrys", "entries")
          }`;
      }
      return op === ">" ? `Must be more than ${n}` : `Must be at least ${n}`;
    },
  ],
  [
    /^Too big: expected (\w+) to (?:be|have) (<=|<)(-?[\d.]+)(?: (characters|items))?$/,
    (_m, type, op, n) => {
      if (type === "string") return `Must be at most ${countOf(n, "character")} long`;
      if (type === "array") {
        return `Must have at most ${countOf(n, "entry").replace("entrys", "entries")}`;
      }
      return op === "<" ? `Must be less than ${n}` : `Must be at most ${n}`;
    },
  ],
  [
    /^Invalid input: expected (\w+), received (\w+)$/,
    (_m, expected, received) =>
      received === "undefined" ? "Is required" : `Must be ${TYPES[expected] ?? expected}`,
  ],
  [
    /^Invalid option: expected one of (.+)$/,
    (_m, list) =>
      `Must be one of ${list.split("|").map((o) => o.replace(/^"|"$/g, "")).join(", ")}`,
  ],
  [/^Invalid URL$/, () => "Must be a valid URL"],
  [/^Invalid ISO datetime$/, () => "Must be a date and time such as 2026-11-24T14:05:00Z"],
  [/^Invalid string: must match pattern .*$/, () => "Has characters that are not allowed here"],
  [/^Unrecognized key: "(.+)"$/, (_m, key) => `${key} is not a known field`],
  // Messages of the API's own checks that name its fields: in the form's words.
  [/^must be after starts_at$/, () => "Must be after the start"],
  [
    /^must be at most (\d+) days after starts_at$/,
    (_m, n) => `Must end at most ${n} days after the start`,
  ],
  [
    /^must name at least one target \(set enabled to false to notify nobody\)$/,
    () => "Choose at least one target, or untick Send notifications to notify nobody",
  ],
  [
    /^must be (a number|a string) with (lt|le|gt|ge|eq|ne|contains)$/,
    (_m, kind, op) =>
      `Must be ${kind === "a number" ? "a number" : "text"} to use "${opWords(JSON_OPS, op)}"`,
  ],
  [
    /^no location is named "(.+)" \(GET \/locations\)$/,
    (_m, name) => `There is no location named "${name}" (see Locations)`,
  ],
  [/^is not a known field$/, () => "Is not a known field"],
];

/**
 * A validation message as a sentence: `Too small: expected number to be >=1` reads
 * `Must be at least 1`; a message the dashboard does not know keeps its words, with a capital.
 * @param {string} message
 * @returns {string}
 */
export function sentence(message) {
  const text = String(message ?? "").trim();
  for (const [pattern, make] of RULES) {
    const match = text.match(pattern);
    if (match) return make(...match);
  }
  return capital(text);
}

/**
 * A field's path as words: `interval_seconds` reads `Interval`, `expect.json.1.value` reads
 * `Assertions, JSON check 2, value`; a part it does not know (a header's name) stays as it is.
 * @param {string} path
 * @returns {string}
 */
export function fieldWords(path) {
  const parts = String(path ?? "").split(".").filter((p) => p !== "");
  const words = [];
  for (const part of parts) {
    if (/^\d+$/.test(part)) {
      // An entry of a list: `JSON check 2`, or `Entry 2` of the field the message is beside.
      if (words.length) words[words.length - 1] += ` ${Number(part) + 1}`;
      else words.push(`entry ${Number(part) + 1}`);
    } else words.push(FIELD_NAMES[part] ?? part.replaceAll("_", " "));
  }
  return capital(words.join(", "));
}

/**
 * A detail as a sentence that names its field, for where it is shown away from the field:
 * `Interval: must be at least 10`.
 * @param {{ path?: string, message: string }} detail
 * @returns {string}
 */
export function detailSentence({ path, message }) {
  const text = sentence(message);
  if (!path) return text;
  return `${fieldWords(path)}: ${lowerFirst(text)}`;
}
