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
import { pagerduty } from "./pagerduty.ts";
import { opsgenie } from "./opsgenie.ts";
import { teams } from "./teams.ts";
import { googleChat } from "./google_chat.ts";
import { mattermost } from "./mattermost.ts";
import { matrix } from "./matrix.ts";
import { telegram } from "./telegram.ts";
import { ntfy } from "./ntfy.ts";
import { pushover } from "./pushover.ts";
import { gotify } from "./gotify.ts";
import { twilioSms } from "./twilio_sms.ts";

/** Every kind, in the order the API and the documents list them. */
export const PROVIDERS = [
  webhook,
  slack,
  discord,
  mail,
  pagerduty,
  opsgenie,
  teams,
  googleChat,
  mattermost,
  matrix,
  telegram,
  ntfy,
  pushover,
  gotify,
  twilioSms,
] as const;

type Union = (typeof PROVIDERS)[number]["fields"];
type Merged<U> = (U extends unknown ? (u: U) => void : never) extends (u: infer I) => void ? I
  : never;
/** Every kind's fields in one (the API's bodies name them all), by their types. */
export type AllFields = { [K in keyof Merged<Union>]: Merged<Union>[K] };

/** The provider of a kind; undefined for a kind no provider has. */
export function providerOf(kind: string): Provider | undefined {
  const found: Provider | undefined = PROVIDERS.find((p) => p.kind === kind);
  return found;
}
