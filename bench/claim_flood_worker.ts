/**
 * `bench:claim-flood`'s flood, on a thread of its own, so that the caller whose reads are timed
 * does not wait behind the flood's own answers: told `{ url, token, claims, waitSeconds,
 * giveUpMs }`, it sends that many claims at once, each as a runner of its own, and answers how
 * each was answered.
 *
 * @module
 */

export interface Flood {
  url: string;
  token: string;
  claims: number;
  waitSeconds: number;
  giveUpMs: number;
}

export interface ClaimAnswer {
  status: number | "no answer" | "error";
  ms: number;
  retryAfter: boolean;
  code?: string;
}

async function claim(flood: Flood, i: number): Promise<ClaimAnswer> {
  const started = performance.now();
  try {
    const response = await fetch(`${flood.url}/api/v1/runner/claim`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-api-key": flood.token },
      body: JSON.stringify({
        runner: `made-up-${i}`,
        version: "bench",
        wait_seconds: flood.waitSeconds,
      }),
      signal: AbortSignal.timeout(flood.giveUpMs),
    });
    const body = await response.json().catch(() => null);
    return {
      status: response.status,
      ms: performance.now() - started,
      retryAfter: response.headers.has("retry-after"),
      code: body?.error?.code,
    };
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === "TimeoutError";
    return {
      status: timedOut ? "no answer" : "error",
      code: timedOut ? undefined : (error as Error).message.slice(0, 60),
      ms: performance.now() - started,
      retryAfter: false,
    };
  }
}

self.onmessage = async (event: MessageEvent<Flood>) => {
  const flood = event.data;
  const answers = await Promise.all(
    Array.from({ length: flood.claims }, (_, i) => claim(flood, i)),
  );
  self.postMessage(answers);
  self.close();
};
