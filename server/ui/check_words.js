// @ts-check
/**
 * The assertions' checks (`expect.json[].op`, `expect.headers[].op`, docs/assertions.md) in the
 * words the dashboard uses for them: in the probe form's choices, in the probe page's list of
 * assertions, and in the messages that name a check. One list, so the three cannot disagree.
 */

/**
 * The checks on a JSON value, in words.
 * @type {[string, string][]}
 */
export const JSON_OPS = [
  ["eq", "equals"],
  ["ne", "does not equal"],
  ["lt", "is less than"],
  ["le", "is at most"],
  ["gt", "is greater than"],
  ["ge", "is at least"],
  ["contains", "contains"],
  ["exists", "exists"],
  ["not_exists", "does not exist"],
];

/**
 * The checks on a header, in words.
 * @type {[string, string][]}
 */
export const HEADER_OPS = [
  ["eq", "equals"],
  ["contains", "contains"],
  ["exists", "is present"],
  ["not_exists", "is absent"],
];

/**
 * A check in words (`is at most`); the check's own name when the list does not know it.
 * @param {[string, string][]} ops
 * @param {string} op
 */
export const opWords = (ops, op) => ops.find(([o]) => o === op)?.[1] ?? op;

/**
 * A failed check's name (`failed_checks[].check`, as a run's `error` names it: `json.1`) in the
 * form's words: `JSON check 2`. A name it does not know stays as it is.
 * @param {string} check
 */
export function checkName(check) {
  const [kind, first, second] = check.split(".");
  const nth = (/** @type {string | undefined} */ index) => Number(index) + 1;
  if (kind === "status" && first === undefined) return "Status code";
  if (kind === "certificate_days" && first === undefined) return "Certificate days";
  if (/^\d+$/.test(first ?? "") && second === undefined) {
    if (kind === "json") return `JSON check ${nth(first)}`;
    if (kind === "headers") return `Header check ${nth(first)}`;
  }
  if (kind === "body" && /^\d+$/.test(second ?? "")) {
    if (first === "contains") return `Body must contain, entry ${nth(second)}`;
    if (first === "not_contains") return `Body must not contain, entry ${nth(second)}`;
  }
  return check;
}
