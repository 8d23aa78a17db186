/**
 * Test support for callers that read per-location results (the typed client, the CLI, export,
 * the dashboard): a remote location's runner played by hand through the runner protocol. It
 * claims the location's due runs with the location's token and posts a result for each, without
 * reaching any target, so tests choose the outcome and latency a location reports.
 *
 * @module
 */
import { BASE } from "./app.ts";

export interface RemoteRunOptions {
  outcome?: "up" | "degraded" | "down";
  durationMs?: number;
  httpStatus?: number | null;
}

async function call(
  handler: (request: Request) => Promise<Response>,
  token: string,
  path: string,
  body: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const response = await handler(
    new Request(`${BASE}/api/v1/runner/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-api-key": token },
      body: JSON.stringify(body),
    }),
  );
  const answer = await response.json();
  if (response.status !== 200) {
    throw new Error(`runner/${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  }
  return answer.data;
}

/**
 * Claims every due run of the token's location and posts a result for each, as a remote runner
 * would: answers how many were recorded.
 */
export async function runRemotely(
  handler: (request: Request) => Promise<Response>,
  token: string,
  { outcome = "up", durationMs = 42, httpStatus = 200 }: RemoteRunOptions = {},
): Promise<number> {
  const who = { runner: "test-remote", version: "test-1" };
  const claimed = await call(handler, token, "claim", { ...who, max: 1000, wait_seconds: 0 });
  const runs = claimed.runs as { run_id: string }[];
  if (runs.length === 0) return 0;
  const posted = await call(handler, token, "results", {
    ...who,
    results: runs.map((run) => ({
      run_id: run.run_id,
      started_at: new Date().toISOString(),
      duration_ms: durationMs,
      outcome,
      http_status: outcome === "down" ? null : httpStatus,
      error: outcome === "down" ? "connection refused" : null,
      address: "127.0.0.1",
      failed_checks: null,
    })),
  });
  return posted.recorded as number;
}
