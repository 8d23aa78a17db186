/** Helpers for values that arrive as JSON and must fit into PostgreSQL text. */

/** Whether a string holds a NUL character, which PostgreSQL text cannot store. */
export function hasNul(value: string): boolean {
  return value.includes("\0");
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
