/**
 * `twilio_sms`: one SMS per message through Twilio's Messages API
 * (`POST /2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP basic auth with the account SID
 * and auth token): the subject and the cause, cut to one segment (160 characters of the GSM
 * alphabet, 70 otherwise), so a transition is one short text and one charge. The auth token is
 * the credential.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { z } from "zod";
import { truncate } from "../formats.ts";
import { noticeOf } from "../notice.ts";
import { defineProvider } from "../provider.ts";
import { baseUrl, endpoint, secretToken, textSetting } from "./vendor_fields.ts";

export const TWILIO_URL = "https://api.twilio.com";

const accountSid = z.string().regex(/^AC[0-9a-fA-F]{32}$/, "must be AC and 32 hex digits");
const phone = z.string().regex(
  /^\+[1-9][0-9]{6,14}$/,
  "must be a number in E.164 form, +15558675310",
);

/** GSM 03.38's basic alphabet: a text of these alone fits 160 characters in one segment. */
const GSM = /^[@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&'()*+,\-./0-9:;<=>?¡A-ZÄÖÑÜ§¿a-zäöñüà]*$/;

/**
 * The text cut to one SMS segment: 160 characters when all are of the GSM alphabet's basic set
 * (its cut marked `...`, which is), else 70 (the segment of UCS-2; an extension character such as
 * `[` costs two of 160, so 70 holds those too).
 */
export function oneSegment(text: string): string {
  if (GSM.test(text)) return text.length <= 160 ? text : `${text.slice(0, 157)}...`;
  return truncate(text, 70);
}

export const twilioSms = defineProvider({
  kind: "twilio_sms",
  label: "SMS (Twilio)",
  description: "One short SMS per message, sent through Twilio",
  fields: {
    account_sid: textSetting("Account SID", "AC… (Twilio Console → Account info)", accountSid),
    auth_token: secretToken("Auth token", "The account's auth token"),
    from: textSetting("From", "A Twilio number of the account, +15557122661", phone),
    to: textSetting("To", "The number to text, +15558675310", phone),
    url: baseUrl("API URL", TWILIO_URL),
  },
  request: ({ account_sid, auth_token, from, to, url = TWILIO_URL }, message) => {
    const notice = noticeOf(message);
    const text = notice.cause ? `${notice.subject}: ${notice.cause}` : notice.subject;
    const credentials = Buffer.from(`${account_sid}:${auth_token}`).toString("base64");
    return {
      transport: "http",
      method: "POST",
      url: endpoint(url, `/2010-04-01/Accounts/${account_sid}/Messages.json`),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        authorization: `Basic ${credentials}`,
      },
      body: new URLSearchParams({ To: to, From: from, Body: oneSegment(text) }).toString(),
    };
  },
});
