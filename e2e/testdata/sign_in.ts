/**
 * Signing in to the dashboard: through its form, as a user does (`signInWithForm`), or without
 * typing a key (`signInContext`): a session started through the context's own request API
 * (`POST /auth/sign-in`, from the service's origin), whose cookie the context then holds as a
 * sign-in in the page would leave it.
 *
 * @module
 */
import type { BrowserContext, Page } from "playwright-core";

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

/** Opens the dashboard at `baseUrl`, signs in with `key` through its form, and waits for the overview. */
export async function signInWithForm(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("main").getByRole("heading", { name: "Overview" }).waitFor();
}
