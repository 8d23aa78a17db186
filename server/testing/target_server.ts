/**
 * A local target for probe tests and the benchmark, on 127.0.0.1 and a free port. Every request
 * it sees is recorded, so a test can tell that a blocked probe reached nothing.
 *
 * Routes: `/ok`, `/slow?ms=N`, `/status/N`, `/hang` (answers only when the target closes),
 * `/redirect/N` (a chain of N redirects ending at `/ok`), `/redirect-to?url=U`, `/echo` (answers
 * with the request's method, headers and body as JSON), `/big` (2 MiB), `/health` (answers what
 * `setHealth` last set: `{"status":"UP"}` with 200 at first), `/flap?ms=N` (500 in every other
 * period of N ms, 200 in the others: a flapping service), `/drip?ms=N&bytes=B` (a slow-drip
 * target: B bytes, 10 by default, sent one at a time over N ms), anything else 200.
 *
 * @module
 */

export interface Hit {
  path: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

export interface Target {
  /** `http://127.0.0.1:<port>` (or https). */
  origin: string;
  port: number;
  hits: Hit[];
  /** Requests counted per path, cheaper than `hits` for the benchmark. */
  counts: Map<string, number>;
  /** `/drip` answers being sent now, and the most at once so far. */
  drips: { now: number; peak: number };
  /** What `/health` answers from now on: a status and a JSON body (a service going down). */
  setHealth(status: number, body: unknown): void;
  close(): Promise<void>;
}

export interface TargetOptions {
  tls?: { cert: string; key: string };
  /** Keep only counts, not every request (the benchmark). */
  countOnly?: boolean;
  /** Delay every answer by this many ms. */
  delayMs?: number;
}

type Wait = (ms: number) => Promise<void>;

/**
 * Waits that end early when the target closes (each is in `hanging` until it ends; request.signal
 * is left alone: touching it makes Deno.serve print a warning about its legacy abort behaviour).
 */
function waits(hanging: Set<() => void>): Wait {
  return (ms) =>
    new Promise<void>((resolve) => {
      const release = () => {
        clearTimeout(timer);
        hanging.delete(release);
        resolve();
      };
      const timer = setTimeout(release, ms);
      hanging.add(release);
    });
}

/** `/drip?ms=N&bytes=B`: B bytes sent one at a time over N ms, counted in `drips` meanwhile. */
function drip(url: URL, wait: Wait, drips: Target["drips"]): Response {
  const ms = Number(url.searchParams.get("ms") ?? 1_000);
  const bytes = Number(url.searchParams.get("bytes") ?? 10);
  let sent = 0;
  let open = true;
  const end = () => {
    if (open) drips.now--;
    open = false;
  };
  drips.now++;
  drips.peak = Math.max(drips.peak, drips.now);
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await wait(ms / bytes);
      if (!open) return;
      controller.enqueue(new Uint8Array([0x2e]));
      if (++sent >= bytes) {
        end();
        controller.close();
      }
    },
    cancel: end,
  });
  return new Response(stream);
}

/** What `/health` answers (`setHealth`). */
interface Health {
  status: number;
  body: unknown;
}

/** The answer of each route (see the module's note), once the request is recorded. */
async function answer(
  request: Request,
  url: URL,
  body: string,
  { wait, drips, health }: { wait: Wait; drips: Target["drips"]; health: Health },
): Promise<Response> {
  const path = url.pathname;
  if (path === "/slow") {
    await wait(Number(url.searchParams.get("ms") ?? 200));
    return new Response("slow");
  }
  if (path.startsWith("/status/")) {
    return new Response("status", { status: Number(path.slice(8)) });
  }
  if (path === "/drip") return drip(url, wait, drips);
  if (path === "/hang") {
    await wait(10 * 60_000);
    return new Response("late");
  }
  if (path.startsWith("/redirect/")) {
    const n = Number(path.slice(10));
    const location = n <= 1 ? "/ok" : `/redirect/${n - 1}`;
    return new Response(null, { status: 302, headers: { location } });
  }
  if (path === "/redirect-to") {
    return new Response(null, {
      status: Number(url.searchParams.get("status") ?? 302),
      headers: { location: url.searchParams.get("url") ?? "/ok" },
    });
  }
  if (path === "/echo") {
    return Response.json({
      method: request.method,
      headers: Object.fromEntries(request.headers),
      body,
    });
  }
  if (path === "/big") return new Response(new Uint8Array(2 * 1024 * 1024));
  if (path === "/health") return Response.json(health.body, { status: health.status });
  if (path === "/flap") {
    const period = Number(url.searchParams.get("ms") ?? 10_000);
    return new Response("flap", { status: Math.floor(Date.now() / period) % 2 ? 500 : 200 });
  }
  return new Response("ok");
}

export function startTarget(options: TargetOptions = {}): Promise<Target> {
  const hits: Hit[] = [];
  const counts = new Map<string, number>();
  const pending = new Set<Promise<unknown>>();
  const hanging = new Set<() => void>();
  const health: Health = { status: 200, body: { status: "UP" } };
  const drips = { now: 0, peak: 0 };
  const wait = waits(hanging);

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const path = url.pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const body = await request.text();
    if (!options.countOnly) {
      hits.push({
        path,
        method: request.method,
        headers: Object.fromEntries(request.headers),
        body,
      });
    }
    if (options.delayMs) await wait(options.delayMs);
    return answer(request, url, body, { wait, drips, health });
  };

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      ...options.tls,
      onListen: ({ port }) => {
        const scheme = options.tls ? "https" : "http";
        resolve({
          origin: `${scheme}://127.0.0.1:${port}`,
          port,
          hits,
          counts,
          setHealth: (status, body) => Object.assign(health, { status, body }),
          drips,
          close: async () => {
            for (const release of hanging) release();
            await Promise.allSettled(pending);
            await server.shutdown();
          },
        });
      },
      onError: () => new Response("error", { status: 500 }),
    }, (request) => {
      const p = handle(request);
      pending.add(p);
      p.finally(() => pending.delete(p)).catch(() => {});
      return p;
    });
  });
}

/** A loopback port nothing listens on: bound, then closed. */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
