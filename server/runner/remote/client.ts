/**
 * The remote runner's calls to the service: the two operations of the runner protocol, with the
 * location's token. Failures are values: `unreachable` (no answer, or a 5xx, 429 or 503 worth
 * trying again), `refused` (401 or 403: the token no longer works), or the 409 of a post with
 * the run ids it names.
 *
 * @module
 */
import type { ClaimAnswer, ClaimInput, ResultsPostAnswer, ResultsPostInput } from "@probe/shared";

export type Call<T> =
  | { ok: true; data: T }
  | { ok: false; kind: "unreachable"; reason: string; retryAfterMs?: number }
  | { ok: false; kind: "refused"; status: number }
  | { ok: false; kind: "conflict"; runIds: string[] }
  | { ok: false; kind: "invalid"; status: number; reason: string };

export interface ServiceClient {
  claim(
    input: Partial<ClaimInput> & Pick<ClaimInput, "runner" | "version">,
    signal?: AbortSignal,
  ): Promise<Call<ClaimAnswer>>;
  post(input: ResultsPostInput): Promise<Call<ResultsPostAnswer>>;
}

export function createServiceClient(
  { serviceUrl, token, fetch: fetchFn = fetch }: {
    serviceUrl: string;
    token: string;
    fetch?: typeof fetch;
  },
): ServiceClient {
  async function call<T>(
    path: string,
    body: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<Call<T>> {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    let response: Response;
    try {
      response = await fetchFn(`${serviceUrl}/api/v1${path}`, {
        method: "POST",
        headers: { "x-service-api-key": token, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.any(signals),
      });
    } catch (error) {
      return { ok: false, kind: "unreachable", reason: (error as Error).message ?? String(error) };
    }
    let parsed: unknown = null;
    try {
      parsed = await response.json();
    } catch {
      if (response.ok) return { ok: false, kind: "unreachable", reason: "an answer cut short" };
    }
    if (response.ok) return { ok: true, data: (parsed as { data: T }).data };
    const status = response.status;
    if (status === 401 || status === 403) return { ok: false, kind: "refused", status };
    if (status === 409) {
      const details = (parsed as { error?: { details?: { path: string }[] } })?.error?.details ??
        [];
      const runIds = details.flatMap((d) => {
        const index = /^results\.(\d+)\.run_id$/.exec(d.path)?.[1];
        const result = index === undefined
          ? undefined
          : (body as { results?: { run_id: string }[] }).results?.[Number(index)];
        return result ? [result.run_id] : [];
      });
      return { ok: false, kind: "conflict", runIds };
    }
    if (status === 429 || status >= 500) {
      const retryAfter = Number(response.headers.get("retry-after"));
      return {
        ok: false,
        kind: "unreachable",
        reason: `HTTP ${status}`,
        ...(retryAfter > 0 && { retryAfterMs: retryAfter * 1000 }),
      };
    }
    const message = (parsed as { error?: { message?: string } })?.error?.message ?? "";
    return { ok: false, kind: "invalid", status, reason: `HTTP ${status} ${message}`.trim() };
  }

  return {
    claim: (input, signal) => call("/runner/claim", input, 40_000, signal),
    post: (input) => call("/runner/results", input, 30_000),
  };
}
