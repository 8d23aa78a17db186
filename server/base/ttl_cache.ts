/**
 * A small cache of loaded values with a lifetime, a size bound and a version, shared by the
 * public pages, badges and the key check.
 *
 * @module
 */
/**
 * Values kept for `ttlMs` each, at most `maxEntries` (the oldest go first), and only while the
 * `version` they were loaded under is current. Loads of one key at once are shared; a failed
 * load is not kept.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { expires: number; version: number; value: Promise<V> }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(
    { ttlMs, maxEntries = 1000, now = Date.now }: {
      ttlMs: number;
      maxEntries?: number;
      now?: () => number;
    },
  ) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  get(key: string, version: number, load: () => Promise<V>): Promise<V> {
    const now = this.#now();
    const kept = this.#entries.get(key);
    if (kept && kept.expires > now && kept.version === version) return kept.value;
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    const entry = { expires: now + this.#ttlMs, version, value: load() };
    this.#entries.set(key, entry);
    entry.value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    return entry.value;
  }
}
