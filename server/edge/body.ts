/**
 * Reading request bodies within the limits: size (413), UTF-8 and JSON (400), media type (415),
 * nesting, array length and repeated keys (422). Every refusal is an `ApiError` of the one
 * contract.
 *
 * @module
 */
import { findRepeatedKey } from "@probe/shared";
import {
  type ApiError,
  apiError,
  BODY_EMPTY,
  BODY_INCOMPLETE,
  BODY_NOT_UTF8,
  detailPath,
  validationFailed,
} from "../procedures/errors.ts";

/** Largest request body accepted, in bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Deepest nesting of arrays and objects accepted in a JSON body. */
export const MAX_JSON_DEPTH = 32;
/** Longest array accepted anywhere in a JSON body. */
export const MAX_JSON_ARRAY = 1000;

export type Read<T> = { ok: true; value: T } | { ok: false; error: ApiError };

const refuse = (error: ApiError) => ({ ok: false, error }) as const;
/** A limit in words: `1 MiB`, `100 KiB`, else bytes. */
const sizeWords = (bytes: number) =>
  bytes % 1_048_576 === 0
    ? `${bytes / 1_048_576} MiB`
    : bytes % 1024 === 0
    ? `${bytes / 1024} KiB`
    : `${bytes} bytes`;
// The refusal names the limit of the endpoint that read the body (a ping's is smaller).
const tooLarge = (limit: number) =>
  refuse(apiError("payload_too_large", `The request body is larger than ${sizeWords(limit)}`));
const malformed = (message: string) => refuse(apiError("malformed_json", message));

/** Reads a body's bytes, refusing it (413) as soon as it is known to pass the limit. */
export async function readBodyBytes(
  request: Request,
  limit = MAX_BODY_BYTES,
): Promise<Read<Uint8Array>> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limit) return tooLarge(limit);
  if (!request.body) return { ok: true, value: new Uint8Array() };
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      // The connection layer ended a body that stopped arriving (BODY_TIMEOUT_MS), or the
      // client went away: answered, not an internal error.
      return refuse(apiError("bad_request", BODY_INCOMPLETE));
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return tooLarge(limit);
    }
    chunks.push(value);
  }
  return { ok: true, value: chunks.length === 1 ? chunks[0] : concat(chunks, size) };
}

/** Reads a body as UTF-8 text, refusing it (413) as soon as it is known to pass the limit. */
export async function readBodyText(
  request: Request,
  limit = MAX_BODY_BYTES,
): Promise<Read<string>> {
  const read = await readBodyBytes(request, limit);
  if (!read.ok) return read;
  if (read.value.byteLength === 0) return { ok: true, value: "" };
  try {
    return { ok: true, value: new TextDecoder("utf-8", { fatal: true }).decode(read.value) };
  } catch {
    return malformed(BODY_NOT_UTF8);
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

/** `application/json` or any `+json` type, in any case, with or without parameters. */
export function isJsonContentType(header: string | null): boolean {
  if (!header) return false;
  const type = header.split(";")[0].trim().toLowerCase();
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * Reads a JSON object body: 415, 413, 400 and 422 for the ways a body can be unusable. With
 * `optional`, a request without a body (or with an empty one) reads as `undefined`.
 */
export async function readJsonObject(
  request: Request,
  { optional = false }: { optional?: boolean } = {},
): Promise<Read<Record<string, unknown> | undefined>> {
  if (optional && !request.body) return { ok: true, value: undefined };
  const isJson = isJsonContentType(request.headers.get("content-type"));
  if (!isJson && !optional) return refuse(apiError("unsupported_media_type"));
  const text = await readBodyText(request);
  if (!text.ok) return text;
  if (text.value.trim() === "") {
    return optional ? { ok: true, value: undefined } : malformed(BODY_EMPTY);
  }
  if (!isJson) return refuse(apiError("unsupported_media_type"));
  const parsed = parseJson(text.value);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return refuse(validationFailed("", "the request body must be a JSON object"));
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Parses JSON text within the nesting and array limits (400 or 422 when it is not), and refuses
 * (422, naming the field) a number whose text a double cannot hold: `1e309`, `-0`, or more
 * digits than survive (`123456789012345678901234567890`), and an object that repeats a key
 * (`JSON.parse` keeps the last one). Storing those would change them.
 */
export function parseJson(text: string): Read<unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text, keepExactNumbers);
  } catch {
    return malformed("The request body is not valid JSON");
  }
  const problem = checkJsonLimits(value) ?? repeatedKey(text);
  return problem ? refuse(problem) : { ok: true, value };
}

/**
 * The first key an object of valid JSON text repeats, as a 422 naming it and its path; null when
 * none does (see `findRepeatedKey`). Called after the nesting check, so the scan's stack is short.
 */
export function repeatedKey(text: string): ApiError | null {
  const found = findRepeatedKey(text);
  if (!found) return null;
  return validationFailed(
    detailPath(found.path),
    `the key "${
      detailPath([found.key])
    }" appears more than once in this object: send each key once`,
  );
}

/** Stands in, while parsing, for a number whose text does not survive; found by the walk. */
class InexactNumber {
  constructor(readonly source: string) {}
}

function keepExactNumbers(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value !== "number" || context?.source === undefined) return value;
  const exact = Number.isFinite(value) && !Object.is(value, -0) &&
    decimal(context.source) === decimal(String(value));
  return exact ? value : new InexactNumber(context.source);
}

/** A number's text in one form (`digits` e `exponent`), so that `1.50` and `15e-1` compare equal. */
function decimal(text: string): string {
  const [mantissa, exponent = "0"] = text.toLowerCase().split("e");
  const negative = mantissa.startsWith("-");
  const [whole, fraction = ""] = mantissa.replace(/^[-+]/, "").split(".");
  let digits = (whole + fraction).replace(/^0+/, "");
  let power = Number(exponent) - fraction.length;
  while (digits.endsWith("0")) {
    digits = digits.slice(0, -1);
    power++;
  }
  return digits === "" ? "0" : `${negative ? "-" : ""}${digits}e${power}`;
}

/**
 * Refuses JSON nested deeper than MAX_JSON_DEPTH, with arrays longer than MAX_JSON_ARRAY, or
 * holding a number that `parseJson` found inexact.
 */
export function checkJsonLimits(value: unknown): ApiError | null {
  const walk = (v: unknown, depth: number, path: string): ApiError | null => {
    if (v instanceof InexactNumber) {
      return validationFailed(path, `${v.source.slice(0, 40)} cannot be kept exactly as a number`);
    }
    if (typeof v !== "object" || v === null) return null;
    if (depth > MAX_JSON_DEPTH) {
      return validationFailed("", `JSON must not be nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    if (Array.isArray(v) && v.length > MAX_JSON_ARRAY) {
      return validationFailed("", `JSON arrays must not hold more than ${MAX_JSON_ARRAY} items`);
    }
    for (const [key, item] of Object.entries(v)) {
      const found = walk(item, depth + 1, path ? `${path}.${key}` : key);
      if (found) return found;
    }
    return null;
  };
  return walk(value, 1, "");
}
