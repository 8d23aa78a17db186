import { z } from "zod";
import { findNul, hasNul } from "./json.ts";
import { projectName } from "./project.ts";

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

export const probeUrl = z.string().max(MAX_URL_LENGTH).transform((value, ctx) => {
  const normalized = hasNul(value) ? null : normalizeUrl(value);
  if (normalized === null || normalized.length > MAX_URL_LENGTH) {
    ctx.issues.push({
      code: "custom",
      input: value,
      message: `must be an absolute http or https URL of at most ${MAX_URL_LENGTH} characters`,
    });
    return z.NEVER;
  }
  return normalized;
});

export const probeMethod = z.string().transform((value, ctx) => {
  const upper = value.toUpperCase();
  if (!(PROBE_METHODS as readonly string[]).includes(upper)) {
    ctx.issues.push({
      code: "custom",
      input: value,
      message: `must be one of ${PROBE_METHODS.join(", ")}`,
    });
    return z.NEVER;
  }
  return upper as ProbeMethod;
});

const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[^\0\r\n]*$/;

export const probeHeaders = z
  .record(
    z.string().regex(HTTP_TOKEN, "header names must be HTTP tokens"),
    z.string().max(8192).regex(HEADER_VALUE, "header values must not contain CR, LF or NUL"),
  )
  .superRefine((headers, ctx) => {
    const names = Object.keys(headers);
    if (names.length > MAX_HEADERS) {
      ctx.addIssue({ code: "custom", message: `at most ${MAX_HEADERS} headers are allowed` });
    }
    const seen = new Set<string>();
    for (const name of names) {
      const lower = name.toLowerCase();
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
  const path = findNul(value);
  if (path) {
    ctx.addIssue({ code: "custom", path, message: "strings must not contain NUL characters" });
  }
});

export const probeLatency = z.int().min(1).max(MAX_LATENCY_MS);

const probeFields = {
  url: probeUrl,
  method: probeMethod.optional(),
  headers: probeHeaders.optional(),
  body: probeBody.optional(),
  latency: probeLatency.nullable().optional(),
};

/** Create under `/projects/{project}/probes`: the project comes from the path. */
export const probeCreateInput = z.strictObject({ project: z.string(), ...probeFields });
/** Create under `/probes`: the project is named in the body. */
export const probeCreateWithProjectInput = z.strictObject({ project: projectName, ...probeFields });
export type ProbeCreateInput = z.infer<typeof probeCreateInput>;

export const probeRef = z.object({ project: z.string(), probeId: z.string() });
export type ProbeRef = z.infer<typeof probeRef>;

export const probePatchInput = z.strictObject({
  project: z.string(),
  probeId: z.string(),
  url: probeUrl.optional(),
  method: probeMethod.optional(),
  headers: probeHeaders.optional(),
  body: probeBody.optional(),
  latency: probeLatency.nullable().optional(),
});
export type ProbePatchInput = z.infer<typeof probePatchInput>;

export const probeListInput = z.object({ project: z.string().optional() });

export const probe = z.object({
  project: z.string(),
  probe_id: z.string(),
  url: z.string(),
  method: z.enum(PROBE_METHODS),
  headers: z.record(z.string(), z.string()),
  body: z.unknown(),
  latency: z.int().nullable(),
});
export type Probe = z.infer<typeof probe>;

export const probeWritten = z.object({
  project: z.string(),
  url: z.string(),
  probe_id: z.string(),
});
export type ProbeWritten = z.infer<typeof probeWritten>;
