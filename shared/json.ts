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

/** One open object or array of the scan: the keys seen so far, or the index reached. */
interface Open {
  object: boolean;
  keys: Set<string>;
  /** In an object: whether the next string is a key; the key whose value is being read. */
  expectKey: boolean;
  key: string;
  index: number;
}

const QUOTE = 0x22, BACKSLASH = 0x5c, COMMA = 0x2c;
const OPEN_OBJECT = 0x7b, CLOSE_OBJECT = 0x7d, OPEN_ARRAY = 0x5b, CLOSE_ARRAY = 0x5d;

/** The index of the quote that ends the string opening at `start` (the text is valid JSON). */
function stringEnd(text: string, start: number): number {
  let end = start;
  for (;;) {
    end = text.indexOf('"', end + 1);
    let before = end - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    // An even run of backslashes escapes itself, not the quote.
    if ((end - 1 - before) % 2 === 0) return end;
  }
}

/** A key an object repeats, and where: the path of that key (`["headers", "X-A"]`). */
export interface RepeatedKey {
  path: (string | number)[];
  key: string;
}

/**
 * The first key an object of valid JSON text repeats (keys compared decoded: `"a"` and
 * `"\u0061"` are one key); null when none does. `JSON.parse` keeps the last of repeated keys
 * silently, and a reviver only sees that one. One pass over the text, strings skipped with
 * `indexOf`, one entry per depth: call it after the parse (the text must be valid JSON) and,
 * for text from outside, after a nesting check.
 */
export function findRepeatedKey(text: string): RepeatedKey | null {
  // One entry per depth, reused: no allocation per object.
  const stack: Open[] = [];
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const top = stack[depth - 1];
      if (depth > 0 && top.object && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? JSON.parse(text.slice(i, end + 1)) as string : raw;
        if (top.keys.has(key)) {
          const outer = stack.slice(0, depth - 1);
          return { path: [...outer.map((open) => open.object ? open.key : open.index), key], key };
        }
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const open = stack[depth] ??= {
        object: false,
        keys: new Set(),
        expectKey: false,
        key: "",
        index: 0,
      };
      open.object = c === OPEN_OBJECT;
      open.expectKey = open.object;
      open.index = 0;
      if (open.object && open.keys.size > 0) open.keys.clear();
      depth++;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    } else if (c === COMMA) {
      const top = stack[depth - 1];
      if (top.object) top.expectKey = true;
      else top.index++;
    }
  }
  return null;
}
