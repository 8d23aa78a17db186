/**
 * Signing a browser context in to the dashboard without typing a key: a session started through
 * the context's own request API (`POST /auth/sign-in`, from the service's origin), whose cookie
 * the context then holds as a sign-in in the page would leave it.
 *
 * @module
 */
import type { BrowserContext } from "playwright-core";

/** Signs `context` in at `baseUrl` with `key`; throws when the service refuses it. */
export async function signInContext(
  context: BrowserContext,
  baseUrl: string,
  key: string,
): Promise<void> {
  const answer = await context.request.post(`${baseUrl}/auth/sign-in`, {
    data: { api_key: key },
    headers: { origin: new URL(baseUrl).origin },
  });
  if (!answer.ok()) throw new Error(`sign-in refused: ${answer.status()} ${await answer.text()}`);
}
