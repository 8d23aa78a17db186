/**
 * Whether an error is PostgreSQL refusing a text parameter it cannot store: a NUL character
 * (`22021`) or a character with no encoding (`22P05`). Only what a caller sent can do that, so
 * such a request is answered 422, as any other invalid input.
 */
export function isInvalidText(error: unknown): boolean {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === "22021" || code === "22P05") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
