/** Helpers for values that arrive as JSON and must be stored and sent exactly as they came. */

/** Whether a string holds a NUL character, which PostgreSQL text cannot store. */
export function hasNul(value: string): boolean {
  return value.includes("\0");
}

// In a `u` regular expression a surrogate pair is one code point: only a lone half matches.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether a string holds a lone (unpaired) UTF-16 surrogate, such as JSON's `"\udc00"`. It has
 * no UTF-8 form: stored or sent, it would silently become U+FFFD.
 */
export function hasLoneSurrogate(value: string): boolean {
  return LONE_SURROGATE.test(value);
}

export const NUL_MESSAGE = "must not contain NUL characters";
export const LONE_SURROGATE_MESSAGE = "must not contain an unpaired UTF-16 surrogate";

/** Why a string cannot be stored as it was sent, or null when it can. */
export function textProblem(value: string): string | null {
  if (hasNul(value)) return NUL_MESSAGE;
  if (hasLoneSurrogate(value)) return LONE_SURROGATE_MESSAGE;
  return null;
}

/**
 * Finds the first string (value or key) inside a JSON value that cannot be stored as it was
 * sent (a NUL, a lone surrogate), and returns its path and the reason.
 */
export function findBadText(
  value: unknown,
  path: (string | number)[] = [],
): { path: (string | number)[]; message: string } | null {
  if (typeof value === "string") {
    const message = textProblem(value);
    return message ? { path, message } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findBadText(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    // Object.entries sees an own `__proto__` key, as JSON.parse makes it.
    for (const [key, item] of Object.entries(value)) {
      const message = textProblem(key);
      if (message) return { path: [...path, key], message };
      const found = findBadText(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}

/** Finds the first string (value or key) holding a NUL inside a JSON value, and returns its path. */
export function findNul(
  value: unknown,
  path: (string | number)[] = [],
): (string | number)[] | null {
  if (typeof value === "string") return hasNul(value) ? path : null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      if (hasNul(key)) return [...path, key];
      const found = findNul(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
