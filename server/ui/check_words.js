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
