// @ts-check
/**
 * What a failing run found, in the words a person uses: `answered HTTP 500, expected 200`,
 * `JSON /status was "broken", expected "ok"`, `timed out after 5 s`. Made of a run's result as
 * the API gives it (`error`, `failed_checks`), so the dashboard and the service's notifications
 * and incidents (which import this module) say the same. Text it does not recognise is kept as
 * it is.
 */
import { checkName, JSON_OPS, opWords } from "./check_words.js";

/**
 * A failed check as a run's result lists it (`failed_checks[]`).
 * @typedef {{ check: string, expected: string, seen?: string }} FailedCheck
 */

/** Failed checks said in words; the rest are counted. */
const NAMED = 3;

/** A header value a reader is not shown (`shared/secrets.ts`). */
const REDACTED = "<redacted>";

/**
 * Milliseconds as seconds: `5 s`, `2.5 s`, `0.25 s`.
 * @param {number} ms
 */
export const secondsOf = (ms) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * `200`, `200 or 201`, `2xx, 301 or 302`.
 * @param {string[]} items
 */
const either = (items) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;

/**
 * The statuses a `status` check wanted (its `expected`: `one of 200, 201`, `below 400`).
 * @param {string} expected
 */
function wantedStatus(expected) {
  const list = /^one of (.+)$/.exec(expected);
  if (list) return either(list[1].split(", "));
  return expected === "below 400" ? "a status below 400" : expected;
}

/** The TLS error codes said in words (the code stays beside them). */
const TLS_CODES = /** @type {Record<string, string>} */ ({
  CERT_HAS_EXPIRED: "certificate has expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "certificate chain is self-signed",
  ERR_TLS_CERT_ALTNAME_INVALID: "certificate is for another host name",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "certificate could not be verified",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "certificate's issuer is not trusted",
});

/**
 * A run's `error` in words, for runs that name no failed check: a timeout, a refused
 * connection, an HTTP status under the default rule, a TLS or DNS failure, a refusal by the
 * network policy.
 * @param {string} error
 */
export function errorWords(error) {
  let m;
  if ((m = /^timeout after (\d+) ms$/.exec(error))) return `timed out after ${secondsOf(+m[1])}`;
  if ((m = /^HTTP (\d{3})$/.exec(error))) {
    return `answered HTTP ${m[1]}, expected a status below 400`;
  }
  if ((m = /^slower than (\d+) ms$/.exec(error))) {
    return `answered slower than its expected latency of ${secondsOf(+m[1])}`;
  }
  if ((m = /^DNS: (.+)$/.exec(error))) {
    if (m[1] === "no address") return "host name has no address";
    return m[1] === "lookup failed"
      ? "host name could not be resolved"
      : `host name could not be resolved (${m[1]})`;
  }
  if ((m = /^TLS: (.+)$/.exec(error))) {
    if (m[1] === "handshake failed") return "TLS handshake failed";
    return `TLS handshake failed: ${TLS_CODES[m[1]] ?? "error"} (${m[1]})`;
  }
  if ((m = /^blocked: (.+)$/.exec(error))) return `not run, blocked by the network policy: ${m[1]}`;
  return error;
}

/**
 * `"ok"` as seen in a header: quoted, unless it is hidden.
 * @param {string} seen
 */
const quoted = (seen) => (seen === REDACTED ? seen : JSON.stringify(seen));

/**
 * One failed check in words. Its `expected` and `seen` are the runner's (server/runner/
 * assertions.ts); a form this does not know reads `JSON check 2 failed: expected …, saw …`.
 * `answer`: what a `body` check read, `body` for HTTP, `answer` for a TCP, TLS or DNS probe.
 * @param {FailedCheck} c
 * @param {string} [answer]
 */
export function checkWords(c, answer = "body") {
  const { check, expected, seen = "" } = c;
  const kind = check.split(".")[0];
  let m;
  if (check === "status") return `answered HTTP ${seen}, expected ${wantedStatus(expected)}`;
  if (kind === "body" && (m = /^body contains (.+)$/s.exec(expected))) {
    return `${answer} did not contain ${m[1]}`;
  }
  if (kind === "body" && (m = /^body does not contain (.+)$/s.exec(expected))) {
    return `${answer} contained ${m[1]}`;
  }
  if (
    kind === "json" &&
    (m = /^(.*?) (eq|ne|lt|le|gt|ge|contains|exists|not_exists)(?: (.+))?$/s.exec(expected))
  ) {
    const [, where, op, value] = m;
    const name = where === "(root)" ? "JSON body" : `JSON ${where}`;
    if (seen === "missing") return `${name} was missing`;
    if (op === "not_exists") return `${name} was ${seen}, expected it to be absent`;
    if (seen === "body is not JSON" || seen.startsWith("JSON nested")) return `${name}: ${seen}`;
    return `${name} was ${seen}, expected ${
      op === "eq" ? value : `a value that ${opWords(JSON_OPS, op)} ${value}`
    }`;
  }
  if (
    kind === "headers" && (m = /^(\S+) (eq|contains|exists|not_exists)(?: (.+))?$/s.exec(expected))
  ) {
    const [, name, op, value] = m;
    if (seen === "missing") return `header ${name} was missing`;
    if (op === "not_exists") return `header ${name} was present, expected it to be absent`;
    return `header ${name} was ${quoted(seen)}, expected ${
      op === "eq" ? value : `it to contain ${value}`
    }`;
  }
  if (check === "certificate_days") {
    const wanted = /at least (\d+) more days/.exec(expected)?.[1];
    const atLeast = wanted ? `, expected at least ${wanted}` : "";
    if ((m = /^expires on \S+, in (\d+) days$/.exec(seen))) {
      const days = Number(m[1]);
      return days === 0
        ? `certificate expires today${atLeast}`
        : `certificate expires in ${days} day${days === 1 ? "" : "s"}${atLeast}`;
    }
    if ((m = /^expired on (\d{4}-\d{2}-\d{2})/.exec(seen))) return `certificate expired on ${m[1]}`;
    return seen ? `certificate check failed: ${seen}` : "certificate check failed";
  }
  return `${checkName(check)} failed: expected ${expected}${seen ? `, saw ${seen}` : ""}`;
}

/**
 * What a failing run found, in words: its failed checks (at most three, then `and 2 more`), or
 * its error. Null for a run that neither failed a check nor has an error. `kind`: the probe's
 * (`kinds.js`), HTTP when not given.
 * @param {{ error: string | null, failed_checks?: FailedCheck[] | null }} run
 * @param {{ answer: string }} [kind]
 * @returns {string | null}
 */
export function failureWords({ error, failed_checks: checks }, kind = { answer: "body" }) {
  if (checks && checks.length > 0) {
    const words = checks.slice(0, NAMED).map((c) => checkWords(c, kind.answer)).join("; ");
    return checks.length > NAMED ? `${words}; and ${checks.length - NAMED} more` : words;
  }
  return error === null ? null : errorWords(error);
}
