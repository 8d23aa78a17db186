import assert from "node:assert/strict";
import { isSecretHeader, MASKED, maskUrl, REDACTED, redactHeaders } from "./secrets.ts";

Deno.test("maskUrl masks the password and token-like query values, and keeps the rest as stored", () => {
  const cases: [string, string][] = [
    ["https://a.test/x?q=1", "https://a.test/x?q=1"],
    ["https://u:pw@a.test/", `https://u:${MASKED}@a.test/`],
    // A user name alone is the credential (`https://TOKEN@host`).
    ["https://ghp_abc@a.test/", `https://${MASKED}@a.test/`],
    [
      "https://a.test/p?token=t1&page=2&API_KEY=k&access_token=a&sig=s&x-amz-signature=z",
      `https://a.test/p?token=${MASKED}&page=2&API_KEY=${MASKED}&access_token=${MASKED}` +
      `&sig=${MASKED}&x-amz-signature=${MASKED}`,
    ],
    // Encoded names are matched decoded; other parameters keep their bytes; empty values stay.
    [
      "https://a.test/?q=a%20b+c&pass%77ord=p&secret=&flag",
      `https://a.test/?q=a%20b+c&pass%77ord=${MASKED}&secret=&flag`,
    ],
    ["not a url", "not a url"],
  ];
  for (const [url, shown] of cases) assert.equal(maskUrl(url), shown, url);
});

Deno.test("credential headers, names with a credential-like part and extra names are redacted", () => {
  const headers = {
    Authorization: "Bearer x",
    Cookie: "a=b",
    "Proxy-Authorization": "Basic y",
    "X-Api-Key": "k",
    "X-Auth-Token": "t",
    "X-Tenant-Pin": "1234",
    Accept: "text/plain",
    "Keep-Alive": "n",
  };
  assert.deepEqual(redactHeaders(headers, ["x-tenant-pin"]), {
    Authorization: REDACTED,
    Cookie: REDACTED,
    "Proxy-Authorization": REDACTED,
    "X-Api-Key": REDACTED,
    "X-Auth-Token": REDACTED,
    "X-Tenant-Pin": REDACTED,
    Accept: "text/plain",
    "Keep-Alive": "n",
  });
  assert.ok(!isSecretHeader("X-Tenant-Pin"));
});
