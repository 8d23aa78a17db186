import { z } from "zod";
import { findBadText, textProblem } from "./json.ts";
import { pageQuery } from "./envelope.ts";
import { locationList, nameInPath, projectName, text } from "./project.ts";
import { MAX_HEADER_NAME_LENGTH, type ProbeExpect, probeExpect } from "./expect.ts";
import { KIND_FORMS, kindProblems, normalizeProbeUrl } from "./kinds/mod.ts";

export const PROBE_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
export type ProbeMethod = (typeof PROBE_METHODS)[number];

export const MAX_URL_LENGTH = 2048;
export const MAX_HEADERS = 50;
export const MAX_LATENCY_MS = 600_000;

/** Normalises an absolute http(s) URL the WHATWG way, without its fragment; null when it is not one. */
export function normalizeUrl(input: string): string | null {
  if (!URL.canParse(input)) return null;
  const url = new URL(input);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  url.hash = "";
  return url.href;
}

/** A string stored as sent: no lone surrogate, which would be stored as %EF%BF%BD (U+FFFD). */
function urlOf(
  normalize: (value: string) => string | { problem: string },
): z.ZodType<string, string> {
  return z.string().max(MAX_URL_LENGTH).transform((value, ctx) => {
    const problem = textProblem(value);
    const normalized = problem ? { problem } : normalize(value);
    if (typeof normalized !== "string" || normalized.length > MAX_URL_LENGTH) {
      ctx.issues.push({
        code: "custom",
        input: value,
        message: typeof normalized === "string"
          ? `must be at most ${MAX_URL_LENGTH} characters once normalised`
          : normalized.problem,
      });
      return z.NEVER;
    }
    return normalized;
  });
}

/** An absolute http or https URL: what notification targets post to. */
export const httpUrl = urlOf((value) =>
  normalizeUrl(value) ??
    { problem: `must be an absolute http or https URL of at most ${MAX_URL_LENGTH} characters` }
);

/** A probe's URL: its scheme names its kind (`shared/kinds/`), which normalises it. */
export const probeUrl = urlOf(normalizeProbeUrl).describe(
  `What the probe watches; its scheme names its kind: ${KIND_FORMS} (docs/kinds.md).`,
);

/** One of the seven methods, in ASCII letters of any case (`toUpperCase` makes `optıons` OPTIONS). */
export const probeMethod = z.string().transform((value, ctx) => {
  const upper = /^[A-Za-z]+$/.test(value) ? value.toUpperCase() : "";
  if (!(PROBE_METHODS as readonly string[]).includes(upper)) {
    ctx.issues.push({
      code: "custom",
      input: value,
      message: `must be one of ${PROBE_METHODS.join(", ")}`,
    });
    return z.NEVER;
  }
  return upper as ProbeMethod;
}).meta({
  // The transform hides the accepted values from the document: named here, as they are stored.
  enum: [...PROBE_METHODS],
  description: "The HTTP method; letters of any case are accepted and stored upper-case.",
});

/** RFC 9110 token: what a header name may hold. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * Field value characters: visible ASCII, space and tab. No CR, LF, NUL, DEL or other control
 * character, which the runner's HTTP client refuses to send (such a probe could never run). No
 * obs-text (U+0080-U+00FF) either: node:http sends it as one byte each, or as UTF-8 when the
 * request has a body or an `Expect` header, so the target would not always get what is stored.
 */
const HEADER_VALUE = /^[\t\x20-\x7E]*$/;
/** A receiver strips spaces and tabs at either end: it would not see the value stored. */
const HEADER_VALUE_PADDED = /^[\t ]|[\t ]$/;

/**
 * Headers the runner sets itself (framing: `Content-Length`, `Transfer-Encoding`) or that belong
 * to one connection, not to the request (RFC 9110 7.6.1). Sent by a probe they conflict with
 * the runner's own (a `Transfer-Encoding` with its `Content-Length`), so they are refused.
 * `Host` stays allowed: checking a virtual host by address is a real use.
 */
export const FORBIDDEN_HEADERS = [
  "connection",
  "content-length",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
] as const;

const headerValue = z
  .string()
  .max(8192)
  .regex(
    HEADER_VALUE,
    "header values must hold only visible ASCII characters, spaces and tabs " +
      "(no CR, LF, NUL, other control character or non-ASCII character)",
  )
  .refine(
    (value) => !HEADER_VALUE_PADDED.test(value),
    "header values must not start or end with a space or tab",
  );

const HEADER_NAME_MESSAGE =
  `header names must be HTTP tokens (RFC 9110) of at most ${MAX_HEADER_NAME_LENGTH} characters`;
// As long as a header name an assertion may check (expect.ts): one limit for header names.
const headerName = z.string().max(MAX_HEADER_NAME_LENGTH).regex(HTTP_TOKEN, HEADER_NAME_MESSAGE);
// The count is checked below (superRefine, which the document cannot see): `maxProperties`
// says the same in the OpenAPI document.
const headerRecord = z.record(headerName, headerValue, {
  error: (issue) => issue.code === "invalid_key" ? HEADER_NAME_MESSAGE : undefined,
}).meta({ maxProperties: MAX_HEADERS });

/**
 * Header name to value. Checked on the value as it arrives too: `JSON.parse` makes `__proto__`
 * an own key, which a record silently drops, so `{"__proto__": …}` would be stored as `{}`.
 */
export const probeHeaders = z
  .preprocess((headers: z.input<typeof headerRecord>, ctx) => {
    if (typeof headers === "object" && headers !== null && Object.hasOwn(headers, "__proto__")) {
      ctx.issues.push({
        code: "custom",
        input: headers,
        path: ["__proto__"],
        message: "__proto__ is not accepted as a header name",
      });
    }
    return headers;
  }, headerRecord)
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_HEADERS) {
      ctx.addIssue({ code: "custom", message: `at most ${MAX_HEADERS} headers are allowed` });
    }
    const seen = new Set<string>();
    for (const name of names) {
      const lower = name.toLowerCase();
      if ((FORBIDDEN_HEADERS as readonly string[]).includes(lower)) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "connection and framing headers are set by the runner and cannot be sent",
        });
      }
      if (lower === "host" && headers[name] === "") {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "Host must not be empty: the URL's host would be sent instead",
        });
      }
      if (seen.has(lower)) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: "header names must differ ignoring case",
        });
      }
      seen.add(lower);
    }
  });

/** Any JSON value, sent to the target as the request body. */
export const probeBody = z.unknown().superRefine((value, ctx) => {
  const found = findBadText(value);
  if (found) {
    ctx.addIssue({ code: "custom", path: found.path, message: `strings ${found.message}` });
  }
});

export const probeLatency = z.int().min(1).max(MAX_LATENCY_MS);

/**
 * A probe's own interval (s): as `PROBE_INTERVAL_SECONDS` allows, 10 s to a day; `default` is
 * that setting's default.
 */
export const PROBE_INTERVAL_SECONDS = { min: 10, max: 86_400, default: 60 } as const;
/** A probe's own timeout (ms): as `PROBE_TIMEOUT_MS` allows, 100 ms to 2 minutes. */
export const PROBE_TIMEOUT_MS = { min: 100, max: 120_000, default: 10_000 } as const;

export const probeIntervalSeconds = z.int().min(PROBE_INTERVAL_SECONDS.min)
  .max(PROBE_INTERVAL_SECONDS.max);
export const probeTimeoutMs = z.int().min(PROBE_TIMEOUT_MS.min).max(PROBE_TIMEOUT_MS.max);

/** A name for the probe in messages and lists: free text like a project's label. */
export const probeLabel = text(200).min(1);

export const CERTIFICATE_ON_HTTP_MESSAGE = "certificate_days needs an https URL";

/** Whether a definition checks a certificate on a URL that has none (`http:`). */
export function certificateOnHttp(
  url: string | undefined,
  expect: { certificate_days?: number } | null | undefined,
): boolean {
  return expect?.certificate_days !== undefined && typeof url === "string" &&
    url.startsWith("http:");
}

/**
 * Refuses `certificate_days` with an `http:` URL, and what the URL's kind has no use for
 * (`method` on a `tcp://` probe), when a body names both.
 */
function refineDefinition(
  input: {
    url?: string;
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    expect?: ProbeExpect | null;
  },
  ctx: z.RefinementCtx,
) {
  if (certificateOnHttp(input.url, input.expect)) {
    ctx.addIssue({
      code: "custom",
      path: ["expect", "certificate_days"],
      message: CERTIFICATE_ON_HTTP_MESSAGE,
    });
  }
  if (input.url === undefined) return;
  for (const problem of kindProblems({ ...input, url: input.url })) {
    ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
  }
}

const labelField = probeLabel.nullable().optional().describe(
  "A name for the probe in messages and lists (1-200 characters); null clears it.",
);
const expectField = probeExpect.nullable().optional().describe(
  "What a run must show to pass (see docs/assertions.md); null clears it: a status below 400 " +
    "passes. Changing it never changes probe_id.",
);

const intervalField = probeIntervalSeconds.nullable().optional().describe(
  "How often the probe runs, in seconds (10-86400); null or absent: the service-wide " +
    "PROBE_INTERVAL_SECONDS. Never changes probe_id.",
);
const timeoutField = probeTimeoutMs.nullable().optional().describe(
  "How long a run may take, in ms (100-120000); null or absent: the service-wide " +
    "PROBE_TIMEOUT_MS. Never changes probe_id.",
);

const locationsField = locationList.nullable().optional().describe(
  "Where the probe runs: 1 to 16 location names (GET /locations); null or absent: its " +
    "project's default_locations. Unknown names are refused. Never changes probe_id.",
);

/** The most probes one probe depends on. */
export const MAX_DEPENDS_ON = 20;

export const dependsOnField = z.array(z.string().min(1).max(200)).max(MAX_DEPENDS_ON).optional()
  .describe(
    "The probe_ids of probes of the same project this one depends on (at most " +
      `${MAX_DEPENDS_ON}); while one is down, this probe's incident opens untold and is told ` +
      "when that one recovers. [] for none. A cycle is refused.",
  );

const probeFields = {
  url: probeUrl,
  method: probeMethod.optional(),
  headers: probeHeaders.optional(),
  body: probeBody.optional(),
  latency: probeLatency.nullable().optional(),
  label: labelField,
  expect: expectField,
  interval_seconds: intervalField,
  timeout_ms: timeoutField,
  locations: locationsField,
  depends_on: dependsOnField,
};

/** Create under `/projects/{project}/probes`: the project comes from the path. */
export const probeCreateInput = z.strictObject({ project: nameInPath, ...probeFields })
  .superRefine(refineDefinition);
/** Create under `/probes`: the project is named in the body. */
export const probeCreateWithProjectInput = z.strictObject({ project: projectName, ...probeFields })
  .superRefine(refineDefinition);
export type ProbeCreateInput = z.infer<typeof probeCreateInput>;

export const probeRef = z.object({ project: nameInPath, probeId: z.string() });
export type ProbeRef = z.infer<typeof probeRef>;

export const probePatchInput = z.strictObject({
  project: nameInPath,
  probeId: z.string(),
  url: probeUrl.optional(),
  method: probeMethod.optional(),
  headers: probeHeaders.optional(),
  body: probeBody.optional(),
  latency: probeLatency.nullable().optional(),
  label: labelField,
  expect: expectField,
  interval_seconds: intervalField,
  timeout_ms: timeoutField,
  locations: locationsField,
  depends_on: dependsOnField,
}).superRefine(refineDefinition);
export type ProbePatchInput = z.infer<typeof probePatchInput>;

export const probeListInput = z.object({ project: z.string().optional(), ...pageQuery });

export const probeListByProjectInput = z.object({ project: nameInPath, ...pageQuery });

/** A probe's state, from its consecutive runs (see docs/alerts.md). */
export const PROBE_STATES = ["unknown", "up", "degraded", "down"] as const;
export const probeState = z.enum(PROBE_STATES);

/** One location's own state of a probe (docs/locations.md). */
export const locationState = z.object({
  location: z.string(),
  state: probeState,
  state_since: z.string().nullable(),
  last_run_at: z.string().nullable(),
  /** No result for three of the probe's intervals: counted as unknown. */
  stale: z.boolean(),
});
export type LocationState = z.infer<typeof locationState>;

export const probe = z.object({
  project: z.string(),
  probe_id: z.string(),
  url: z.string(),
  method: z.enum(PROBE_METHODS),
  headers: z.record(z.string(), z.string()),
  body: z.unknown(),
  latency: z.int().nullable(),
  label: z.string().nullable(),
  expect: probeExpect.nullable(),
  /** Its own interval (s); null: it runs at the service-wide `PROBE_INTERVAL_SECONDS`. */
  interval_seconds: z.int().nullable().describe(
    "The probe's own interval in seconds; null: the service-wide PROBE_INTERVAL_SECONDS.",
  ),
  /** Its own timeout (ms); null: the service-wide `PROBE_TIMEOUT_MS`. */
  timeout_ms: z.int().nullable().describe(
    "The probe's own run timeout in ms; null: the service-wide PROBE_TIMEOUT_MS.",
  ),
  /** What it runs at: `interval_seconds`, or the service-wide setting when that is null. */
  effective_interval_seconds: z.int().describe(
    "Read-only: the interval the probe runs at, its own or the service-wide one.",
  ),
  /** What its runs are allowed: `timeout_ms`, or the service-wide setting when that is null. */
  effective_timeout_ms: z.int().describe(
    "Read-only: the timeout its runs have, its own or the service-wide one.",
  ),
  /** Its own locations; null: its project's default. */
  locations: z.array(z.string()).nullable().describe(
    "The probe's own locations; null: its project's default_locations.",
  ),
  /** Where it runs: `locations`, or its project's default when that is null. */
  effective_locations: z.array(z.string()).describe(
    "Read-only: the locations the probe runs from, its own or its project's default.",
  ),
  /** Each location's own state (its streaks, by the thresholds), by location name. */
  location_states: z.array(locationState).describe(
    "Read-only: each location's own state; `unknown` and `stale` when it has no result for " +
      "three intervals.",
  ),
  /** From its consecutive runs: `unknown`, `up`, `degraded` or `down` (docs/alerts.md). */
  state: probeState,
  /** When it entered that state; null before its first counted run. */
  state_since: z.string().nullable(),
  /** Present (true) while it is flapping (docs/alerts.md); absent otherwise. */
  flapping: z.literal(true).optional().describe(
    "true while the probe is flapping: its notifications wait until it is stable; absent otherwise.",
  ),
  /** The probes it depends on; absent when none (reads of other probes stay as they were). */
  depends_on: z.array(z.string()).optional().describe(
    "The probe_ids this probe depends on; absent when it depends on none.",
  ),
});
export type Probe = z.infer<typeof probe>;

export const probeWritten = z.object({
  project: z.string(),
  url: z.string(),
  probe_id: z.string(),
});
export type ProbeWritten = z.infer<typeof probeWritten>;
