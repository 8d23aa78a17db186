/**
 * The kinds of notification target: one provider file each, registered in {@link PROVIDERS}.
 * A new kind is its file here, its test and a row in docs/notification_targets.md; the API's
 * schemas (`schema.ts`), storage, the dashboard's form and delivery follow from the list.
 *
 * @module
 */
import type { Provider } from "../provider.ts";
import { webhook } from "./webhook.ts";
import { slack } from "./slack.ts";
import { discord } from "./discord.ts";
import { mail } from "./mail.ts";

/** Every kind, in the order the API and the documents list them. */
export const PROVIDERS: readonly Provider[] = [webhook, slack, discord, mail];

/** The provider of a kind; undefined for a kind no provider has. */
export function providerOf(kind: string): Provider | undefined {
  return PROVIDERS.find((p) => p.kind === kind);
}
