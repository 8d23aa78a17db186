/**
 * What a new user does first in the dashboard before watching anything: signs in, adds a webhook
 * target (`ops-hook`) through the targets page and names it in the alert policy, for the browser
 * scripts of e2e tests whose alerts go to a local receiver.
 *
 * @module
 */
import type { Page } from "playwright-core";
import { signInWithForm } from "./sign_in.ts";

/**
 * Signs in with `apiKey` at `baseUrl`, adds the webhook `ops-hook` posting to `hookUrl` and
 * saves the policy with it among its targets (and, when given, `failuresBeforeDown`).
 */
export async function signInAlertingTo(
  page: Page,
  { baseUrl, apiKey, hookUrl, failuresBeforeDown }: {
    baseUrl: string;
    apiKey: string;
    hookUrl: string;
    failuresBeforeDown?: number;
  },
): Promise<void> {
  const main = page.locator("main");
  const nav = page.getByRole("navigation", { name: "Main" });
  await signInWithForm(page, baseUrl, apiKey);

  await nav.getByRole("link", { name: "Notification targets" }).click();
  const newTarget = main.getByRole("form", { name: "Add a target" });
  await newTarget.getByLabel("Name").fill("ops-hook");
  await newTarget.getByLabel("URL", { exact: true }).fill(hookUrl);
  await newTarget.getByRole("button", { name: "Add target" }).click();
  await main.getByRole("heading", { name: "Targets (2)" }).waitFor();
  await nav.getByRole("link", { name: "Alert policy" }).click();
  const policyForm = main.getByRole("form", { name: "Change the policy" });
  await policyForm.getByRole("checkbox", { name: "ops-hook" }).check();
  if (failuresBeforeDown !== undefined) {
    await policyForm.getByLabel("Failures before down").fill(String(failuresBeforeDown));
  }
  await policyForm.getByRole("button", { name: "Save policy" }).click();
  await policyForm.getByText("Saved.").waitFor();
}
