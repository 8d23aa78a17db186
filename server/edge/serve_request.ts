/**
 * The `Request` of a request without a body, for the connection layer (`serve_exchange.ts`): its
 * URL and method as node:http parsed them, its headers read from node:http's raw name and value
 * pairs, and Deno's own `Request` made only if something asks for more (its signal, a clone, one
 * of its body's readers).
 *
 * Why: a `Request` of Deno's, with its `Headers`, holds some 2.5 KB of heap, and the service keeps
 * each one until its answer is sent. Under load every young-generation collection copied those of
 * all the requests in flight. Without them a REST read allocates 64 → 60 KB, keeps 11.6 → 8.3 KB
 * past a collection, and costs some 8% less CPU (docs/performance.md, "HTTP"). The edge reads a
 * request's URL, method and a few headers by name, which need none of it.
 *
 * Both behave as Deno's own do for everything the interface offers: `get` and `has` read the
 * raw pairs (names without case, repeated values joined by ", "), iterating sorts and joins as
 * `Headers` does (it is one, made on first use), and changing the headers works as on a `Request`
 * made with `new Request`. node:http has already refused what `Headers` would (names that are not
 * tokens, values with control characters) and trimmed each value.
 *
 * @module
 */

/** A header name `Headers` accepts (RFC 9110's token); others are left to it, which throws. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** A request's headers over node:http's raw pairs (`rawHeaders`: name, value, name, value…). */
export class RawHeaders implements Headers {
  #raw: readonly string[];
  /** The same headers as Deno's `Headers`, once something iterates or changes them. */
  #all?: Headers;
  /** Whether they changed: from then on, only `#all` holds them. */
  #changed = false;

  constructor(raw: readonly string[]) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    if (this.#changed || !TOKEN.test(name)) return this.#headers().get(name);
    const wanted = name.toLowerCase();
    const raw = this.#raw;
    let value: string | null = null;
    for (let i = 0; i < raw.length; i += 2) {
      const candidate = raw[i];
      if (candidate.length !== wanted.length || candidate.toLowerCase() !== wanted) continue;
      value = value === null ? raw[i + 1] : `${value}, ${raw[i + 1]}`;
    }
    return value;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  getSetCookie(): string[] {
    return this.#headers().getSetCookie();
  }

  set(name: string, value: string): void {
    this.#headers().set(name, value);
    this.#changed = true;
  }

  append(name: string, value: string): void {
    this.#headers().append(name, value);
    this.#changed = true;
  }

  delete(name: string): void {
    this.#headers().delete(name);
    this.#changed = true;
  }

  forEach(
    callback: (value: string, key: string, parent: this) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, value] of this.#headers()) callback.call(thisArg, value, key, this);
  }

  keys(): ReturnType<Headers["keys"]> {
    return this.#headers().keys();
  }

  values(): ReturnType<Headers["values"]> {
    return this.#headers().values();
  }

  entries(): ReturnType<Headers["entries"]> {
    return this.#headers().entries();
  }

  [Symbol.iterator](): ReturnType<Headers[typeof Symbol.iterator]> {
    return this.#headers()[Symbol.iterator]();
  }

  #headers(): Headers {
    return this.#all ??= new Headers(headerPairs(this.#raw));
  }
}

/**
 * node:http's raw headers (name, value, name, value…) as name and value pairs, the form `Headers`
 * and `Request` copy several times faster than a `Headers` object.
 */
export function headerPairs(raw: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]]);
  return pairs;
}

/**
 * A request without a body: what `new Request(url, { method, headers })` would be, for a URL
 * that parses and a method `Request` accepts (the caller makes sure of both).
 */
export class BodilessRequest implements Request {
  readonly url: string;
  readonly method: string;
  readonly headers: RawHeaders;
  readonly body: ReadableStream<Uint8Array<ArrayBuffer>> | null = null;
  /** Deno's own, made on first need. */
  #request?: Request;

  constructor(url: string, method: string, rawHeaders: readonly string[]) {
    this.url = url;
    this.method = method;
    this.headers = new RawHeaders(rawHeaders);
  }

  #full(): Request {
    return this.#request ??= new Request(this.url, { method: this.method, headers: this.headers });
  }

  get bodyUsed(): boolean {
    return false; // no body to use
  }
  get signal(): AbortSignal {
    return this.#full().signal;
  }
  get cache(): RequestCache {
    return this.#full().cache;
  }
  get credentials(): RequestCredentials {
    return this.#full().credentials;
  }
  get destination(): RequestDestination {
    return this.#full().destination;
  }
  get integrity(): string {
    return this.#full().integrity;
  }
  get isHistoryNavigation(): boolean {
    return this.#full().isHistoryNavigation;
  }
  get isReloadNavigation(): boolean {
    return this.#full().isReloadNavigation;
  }
  get keepalive(): boolean {
    return this.#full().keepalive;
  }
  get mode(): RequestMode {
    return this.#full().mode;
  }
  get redirect(): RequestRedirect {
    return this.#full().redirect;
  }
  get referrer(): string {
    return this.#full().referrer;
  }
  get referrerPolicy(): ReferrerPolicy {
    return this.#full().referrerPolicy;
  }

  /** A copy with the headers as they are now, its signal following this one's. */
  clone(): Request {
    return new Request(this.url, {
      method: this.method,
      headers: this.headers,
      signal: this.signal,
    });
  }
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#full().arrayBuffer();
  }
  blob(): Promise<Blob> {
    return this.#full().blob();
  }
  bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#full().bytes();
  }
  formData(): Promise<FormData> {
    return this.#full().formData();
  }
  // deno-lint-ignore no-explicit-any -- as `Body.json()` is typed
  json(): Promise<any> {
    return this.#full().json();
  }
  text(): Promise<string> {
    return this.#full().text();
  }
  textStream(): ReadableStream<string> {
    return this.#full().textStream();
  }
}
