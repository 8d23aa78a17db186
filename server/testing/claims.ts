/** Claims of a location's runner through the REST interface, for the claim tests of both tiers. */
import assert from "node:assert/strict";
import { type TestClient, uniqueName } from "./app.ts";

/** Who a claim says it comes from, unless a test says otherwise. */
export const WHO = { runner: "r1", version: "test-1" };

/** A new location, with its token. */
export async function location(api: TestClient): Promise<{ name: string; token: string }> {
  const name = uniqueName("loc");
  const res = await api.post("/api/v1/locations", { name });
  assert.equal(res.status, 201, res.text);
  return { name, token: res.body.data.token as string };
}

/** One claim of `token`, answered at once unless `body` gives a `wait_seconds`. */
export const claim = (api: TestClient, token: string, body: Record<string, unknown> = {}) =>
  api.post("/api/v1/runner/claim", { ...WHO, wait_seconds: 0, ...body }, { key: token });

/** `count` claims of `token` that wait up to `seconds`, each as a runner of its own. */
export function waitingClaims(api: TestClient, token: string, count: number, seconds: number) {
  const answered: number[] = [];
  const claims = Array.from(
    { length: count },
    (_, i) =>
      claim(api, token, { runner: `w${i}`, wait_seconds: seconds }).then((res) => {
        answered.push(res.status);
        return res;
      }),
  );
  return { claims, answered };
}
