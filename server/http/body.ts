import { type ApiError, apiError } from "../errors.ts";

/** Largest request body accepted, in bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest nesting of arrays and objects accepted in a JSON body. */
export const MAX_JSON_DEPTH = 32;
/** Longest array accepted anywhere in a JSON body. */
export const MAX_JSON_ARRAY = 1000;

export type BodyResult = { ok: true; value: string } | { ok: false; error: ApiError };

const tooLarge = () =>
  ({
    ok: false,
    error: apiError(413, "payload_too_large", "The request body is larger than 1 MiB"),
  }) as const;

/** Reads a body as UTF-8 text, refusing it (413) as soon as it is known to pass the limit. */
export async function readBodyText(request: Request, limit = MAX_BODY_BYTES): Promise<BodyResult> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) return tooLarge();
  if (!request.body) return { ok: true, value: "" };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return tooLarge();
    }
    chunks.push(value);
  }
  const bytes = chunks.length === 1 ? chunks[0] : concat(chunks, size);
  try {
    return { ok: true, value: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { ok: false, error: malformed("The request body is not valid UTF-8") };
  }
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

const malformed = (message: string) => apiError(400, "malformed_json", message);

export function isJsonContentType(header: string | null): boolean {
  if (!header) return false;
  const type = header.split(";")[0].trim().toLowerCase();
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

export type JsonResult = { ok: true; value: Record<string, unknown> } | {
  ok: false;
  error: ApiError;
};

/** Reads a JSON object body: 415, 413, 400 and 422 for the ways a body can be unusable. */
export async function readJsonObject(request: Request): Promise<JsonResult> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    return {
      ok: false,
      error: apiError(415, "unsupported_media_type", "The request body must be application/json"),
    };
  }
  const text = await readBodyText(request);
  if (!text.ok) return text;
  if (text.value.trim() === "") return { ok: false, error: malformed("The request body is empty") };
  let value: unknown;
  try {
    value = JSON.parse(text.value);
  } catch {
    return { ok: false, error: malformed("The request body is not valid JSON") };
  }
  const tooComplex = checkJsonLimits(value);
  if (tooComplex) return { ok: false, error: tooComplex };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      ok: false,
      error: apiError(422, "validation_failed", "Validation failed", [
        { path: "", message: "the request body must be a JSON object" },
      ]),
    };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** Refuses JSON nested deeper than MAX_JSON_DEPTH or with arrays longer than MAX_JSON_ARRAY. */
export function checkJsonLimits(value: unknown): ApiError | null {
  const problem = (message: string) =>
    apiError(422, "validation_failed", "Validation failed", [{ path: "", message }]);
  const walk = (v: unknown, depth: number): ApiError | null => {
    if (typeof v !== "object" || v === null) return null;
    if (depth > MAX_JSON_DEPTH) {
      return problem(`JSON must not be nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    const items = Array.isArray(v) ? v : Object.values(v);
    if (Array.isArray(v) && v.length > MAX_JSON_ARRAY) {
      return problem(`JSON arrays must not hold more than ${MAX_JSON_ARRAY} items`);
    }
    for (const item of items) {
      const found = walk(item, depth + 1);
      if (found) return found;
    }
    return null;
  };
  return walk(value, 1);
}
