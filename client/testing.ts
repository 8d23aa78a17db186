/**
 * Test support for the client's own tests (not part of the package: `mod.ts` does not export
 * it): a client over a test app's handler, and the check that a call rejects as it should.
 *
 * @module
 */
import assert from "node:assert/strict";
import { BASE, TEST_API_KEY, type TestContext } from "../server/testing/app.ts";
import { createProbeClient, ProbeApiError, type ProbeClient } from "./mod.ts";

/** A client whose every call goes to the test app's handler, as HTTP requests would. */
export function clientOf({ app }: Pick<TestContext, "app">, seen?: string[]): ProbeClient {
  return createProbeClient({
    baseUrl: BASE,
    apiKey: TEST_API_KEY,
    fetch: (input, init) => {
      const request = new Request(input, init);
      seen?.push(`${request.method} ${new URL(request.url).pathname}`);
      return app.handler(request);
    },
  });
}

/** Runs `fn` and answers the ProbeApiError it must reject with. */
export async function failure(fn: () => Promise<unknown>): Promise<ProbeApiError> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof ProbeApiError, `expected a ProbeApiError, got ${error}`);
    return error;
  }
  assert.fail("the call succeeded");
}

/** Asserts that `fn` rejects with this status and code (and a detail naming `path`). */
export async function rejects(
  fn: () => Promise<unknown>,
  status: number,
  code: string,
  path?: string,
): Promise<ProbeApiError> {
  const error = await failure(fn);
  assert.equal(error.status, status, error.message);
  assert.equal(error.code, code);
  if (path !== undefined) {
    assert.ok(error.details.some((d) => d.path === path), JSON.stringify(error.details));
  }
  return error;
}
