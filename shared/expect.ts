import { z } from "zod";
import { textProblem } from "./json.ts";
import { MAX_SEEN_LENGTH } from "./rules.ts";

/** At most this many assertions per probe, counted as `countAssertions` does. */
export const MAX_ASSERTIONS = 20;
/** Longest string an assertion may compare with (body strings, json and header values). */
export const MAX_ASSERTION_TEXT = 1024;
export const MAX_POINTER_LENGTH = 512;
export const MAX_HEADER_NAME_LENGTH = 128;
export const MAX_CERTIFICATE_DAYS = 3650;
export { MAX_SEEN_LENGTH };

export const STATUS_CLASSES = ["1xx", "2xx", "3xx", "4xx", "5xx"] as const;
export const JSON_OPS = [
  "eq",
  "ne",
  "lt",
  "le",
  "gt",
  "ge",
  "contains",
  "exists",
  "not_exists",
] as const;
export type JsonOp = (typeof JSON_OPS)[number];
export const HEADER_OPS = ["eq", "contains", "exists", "not_exists"] as const;
export type HeaderOp = (typeof HEADER_OPS)[number];

/** The ops that take no `value`; every other op requires one. */
const PRESENCE_OPS: readonly string[] = ["exists", "not_exists"];
const ORDER_OPS: readonly string[] = ["lt", "le", "gt", "ge"];

/** A string stored as PostgreSQL text and compared as sent: no NUL, no lone surrogate. */
const assertionText = (min: number, max: number) =>
  z.string().min(min).max(max).superRefine((s, ctx) => {
    const problem = textProblem(s);
    if (problem) ctx.addIssue({ code: "custom", input: s, message: problem });
  });

const statusEntry = z.union([z.int().min(100).max(599), z.enum(STATUS_CLASSES)], {
  error: 'must be an HTTP status code (100-599) or a class "1xx" to "5xx"',
});

/** Status codes and classes (`[200, 204]`, `["2xx", 301]`); absent: below 400 passes. */
export const statusExpect = z.array(statusEntry).min(1).max(MAX_ASSERTIONS).superRefine(
  (entries, ctx) => {
    const seen = new Set<number | string>();
    entries.forEach((entry, i) => {
      if (seen.has(entry)) {
        ctx.addIssue({ code: "custom", path: [i], message: "must not repeat a code or class" });
      }
      seen.add(entry);
    });
  },
);

const bodyStrings = z.array(assertionText(1, MAX_ASSERTION_TEXT)).max(MAX_ASSERTIONS);

/** Strings the first 1 MiB of the body (as UTF-8 text) must, or must not, contain. */
export const bodyExpect = z.strictObject({
  contains: bodyStrings.optional(),
  not_contains: bodyStrings.optional(),
});

/** RFC 6901: empty (the whole document), or `/`-separated tokens where `~` is `~0` or `~1`. */
const POINTER = /^(\/([^~/]|~[01])*)*$/;

export const jsonPointer = assertionText(0, MAX_POINTER_LENGTH).regex(
  POINTER,
  'must be a JSON Pointer (RFC 6901): "" or starting with "/", with "~" written as "~0" or "~1"',
);

/** A JSON scalar: what a JSON assertion compares with. */
export const assertionValue = z.union([
  assertionText(0, MAX_ASSERTION_TEXT),
  z.number(),
  z.boolean(),
  z.null(),
], {
  error:
    `must be a string (at most ${MAX_ASSERTION_TEXT} characters), a number, true, false or null`,
});
export type AssertionValue = z.infer<typeof assertionValue>;

/** `value` is required for every op but `exists`/`not_exists`, and refused for those two. */
function checkValue(
  item: { op: string; value?: unknown },
  ctx: z.RefinementCtx,
  needs: (op: string, value: unknown) => string | null,
) {
  if (PRESENCE_OPS.includes(item.op)) {
    if (item.value !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["value"],
        message: `must not be given with ${item.op}`,
      });
    }
    return;
  }
  if (item.value === undefined) {
    ctx.addIssue({ code: "custom", path: ["value"], message: `is required with ${item.op}` });
    return;
  }
  const problem = needs(item.op, item.value);
  if (problem) ctx.addIssue({ code: "custom", path: ["value"], message: problem });
}

/** One check on the body parsed as JSON, at a JSON Pointer. */
export const jsonExpect = z.strictObject({
  path: jsonPointer,
  op: z.enum(JSON_OPS),
  value: assertionValue.optional(),
}).superRefine((item, ctx) =>
  checkValue(
    item,
    ctx,
    (op, value) =>
      ORDER_OPS.includes(op) && typeof value !== "number" ? `must be a number with ${op}` : null,
  )
);
export type JsonExpect = z.infer<typeof jsonExpect>;

/** RFC 9110 token: what a header name may hold. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** One check on a response header; the name is matched ignoring case. */
export const headerExpect = z.strictObject({
  name: z.string().min(1).max(MAX_HEADER_NAME_LENGTH).regex(
    HTTP_TOKEN,
    "header names must be HTTP tokens (RFC 9110)",
  ),
  op: z.enum(HEADER_OPS),
  value: assertionValue.optional(),
}).superRefine((item, ctx) =>
  checkValue(
    item,
    ctx,
    (op, value) => typeof value !== "string" ? `must be a string with ${op}` : null,
  )
);
export type HeaderExpect = z.infer<typeof headerExpect>;

export const probeExpectShape = {
  status: statusExpect.optional().describe(
    'Status codes and classes that pass (`[200, 204]`, `["2xx", 301]`); absent: below 400 passes. ' +
      "http(s):// probes only.",
  ),
  body: bodyExpect.optional().describe(
    "Strings the first 1 MiB of the body (as UTF-8 text) must, or must not, contain. For tcp:// " +
      "and tls://, the answer read once connected; for dns://, the records, one per line.",
  ),
  json: z.array(jsonExpect).max(MAX_ASSERTIONS).optional().describe(
    "Checks on the body parsed as JSON, each at a JSON Pointer (RFC 6901). For dns://, on the " +
      'records as an array of strings (`{"path": "", "op": "contains", "value": "192.0.2.1"}`); ' +
      "http(s):// and dns:// probes only.",
  ),
  headers: z.array(headerExpect).max(MAX_ASSERTIONS).optional().describe(
    "Checks on the final response's headers; names match ignoring case. http(s):// probes only.",
  ),
  certificate_days: z.int().min(1).max(MAX_CERTIFICATE_DAYS).optional().describe(
    "The final hop's TLS certificate must stay valid at least this many more days (https:// " +
      "and tls:// only).",
  ),
};

/**
 * How many assertions an `expect` holds: a status list counts one, each body string one, each
 * JSON or header check one, the certificate check one.
 */
export function countAssertions(expect: {
  status?: unknown[];
  body?: { contains?: unknown[]; not_contains?: unknown[] };
  json?: unknown[];
  headers?: unknown[];
  certificate_days?: number;
}): number {
  return (expect.status ? 1 : 0) +
    (expect.body?.contains?.length ?? 0) +
    (expect.body?.not_contains?.length ?? 0) +
    (expect.json?.length ?? 0) +
    (expect.headers?.length ?? 0) +
    (expect.certificate_days !== undefined ? 1 : 0);
}

/**
 * What a run must show to pass. An empty object means the default rule: a status
 * below 400. See docs/assertions.md.
 */
export const probeExpect = z.strictObject(probeExpectShape).superRefine((expect, ctx) => {
  const count = countAssertions(expect);
  if (count > MAX_ASSERTIONS) {
    ctx.addIssue({
      code: "custom",
      message: `at most ${MAX_ASSERTIONS} assertions are allowed in all (this has ${count})`,
    });
  }
}).describe(
  "What a run must show to pass; any failed assertion makes it down. At most 20 assertions: " +
    "a status list counts 1, each body string, JSON check and header check 1, the certificate 1. " +
    "{} keeps the default rule (status below 400).",
);
export type ProbeExpect = z.infer<typeof probeExpect>;

/** One assertion a run failed; `seen` only for failing runs, truncated, never a secret. */
export const failedCheck = z.object({
  check: z.string().describe(
    "Which assertion: status, body.contains.0, body.not_contains.1, json.0, headers.2, certificate_days.",
  ),
  expected: z.string().describe("What was expected, in a few words."),
  seen: z.string().max(MAX_SEEN_LENGTH).optional().describe(
    "What was seen instead: at most 200 characters, a body excerpt at most 80, " +
      "credential-like header values never shown.",
  ),
});
export type FailedCheck = z.infer<typeof failedCheck>;

/** Longest `check` (an assertion's name) and `expected` a remote runner may post. */
export const MAX_CHECK_LENGTH = 64;
export const MAX_EXPECTED_LENGTH = 200;

/**
 * A failed check as a remote runner posts it: `failedCheck` with every string bounded (the
 * longest the runner writes fit) and storable, and no other field.
 */
export const postedFailedCheck = z.strictObject({
  check: assertionText(1, MAX_CHECK_LENGTH).describe(
    `${failedCheck.shape.check.description} At most ${MAX_CHECK_LENGTH} characters.`,
  ),
  expected: assertionText(0, MAX_EXPECTED_LENGTH).describe(
    `${failedCheck.shape.expected.description} At most ${MAX_EXPECTED_LENGTH} characters.`,
  ),
  seen: assertionText(0, MAX_SEEN_LENGTH).optional().describe(
    failedCheck.shape.seen.description ?? "",
  ),
});
