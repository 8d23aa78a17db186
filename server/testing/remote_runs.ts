/**
 * Test support for callers that read per-location results (the typed client, the CLI, export,
 * the dashboard): a remote location's runner played by hand through the runner protocol. It
 * claims the location's due runs with the location's token and posts a result for each, without
 * reaching any target, so tests choose the outcome and latency a location reports.
 *
 * @module
 */
import { BASE, type TestClient, uniqueName } from "./app.ts";

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

/** The runner the protocol's tests post as, unless they name another. */
export const TEST_RUNNER = { runner: "r1", version: "test-1" };

/** A new remote location: its name and token. */
export async function makeLocation(api: TestClient): Promise<{ name: string; token: string }> {
  const name = uniqueName("loc");
  const res = await api.post("/api/v1/locations", { name });
  if (res.status !== 201) throw new Error(`a location answered ${res.status}: ${res.text}`);
  return { name, token: res.body.data.token as string };
}

/** Claims with `token`, as `TEST_RUNNER` unless `body` names another, without waiting. */
export const claimAs = (api: TestClient, token: string, body: Record<string, unknown> = {}) =>
  api.post("/api/v1/runner/claim", { ...TEST_RUNNER, wait_seconds: 0, ...body }, { key: token });

/** Posts `results` with `token`, as `who`. */
export const postAs = (api: TestClient, token: string, results: unknown[], who = TEST_RUNNER) =>
  api.post("/api/v1/runner/results", { ...who, results }, { key: token });

/** What a runner posts for a run it made: an `up` run answered 200, started now. */
export const resultOf = (runId: string) => ({
  run_id: runId,
  started_at: new Date().toISOString(),
  duration_ms: 12,
  outcome: "up",
  http_status: 200,
  error: null,
  address: "127.0.0.1",
  failed_checks: null,
});

/** A new project with one probe that runs from `location` only (its target is never reached). */
export async function probeOnlyAt(
  api: TestClient,
  location: string,
): Promise<{ project: string; probeId: string }> {
  const project = uniqueName();
  const created = await api.post("/api/v1/projects", { project });
  if (created.status !== 201) throw new Error(`a project answered ${created.status}`);
  const made = await api.post(`/api/v1/projects/${project}/probes`, {
    url: `http://127.0.0.1:9/${uniqueName("q")}`,
    locations: [location],
  });
  if (made.status !== 201) throw new Error(`a probe answered ${made.status}: ${made.text}`);
  return { project, probeId: made.body.data.probe_id as string };
}
