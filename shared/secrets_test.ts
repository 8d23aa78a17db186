import assert from "node:assert/strict";
import { isSecretHeader, MASKED, maskUrl, REDACTED, redactHeaders } from "./secrets.ts";

Deno.test("maskUrl masks the password, every query value and the fragment, and keeps the rest as stored", () => {
  const cases: [string, string][] = [
    ["https://a.test/x", "https://a.test/x"],
    ["https://a.test/x?q=1", `https://a.test/x?q=${MASKED}`],
    ["https://u:pw@a.test/", `https://u:${MASKED}@a.test/`],
    // A user name alone is the credential (`https://TOKEN@host`).
    ["https://ghp_abc@a.test/", `https://${MASKED}@a.test/`],
    [
      "https://a.test/p?token=t1&page=2&API_KEY=k&pass=p&code=c&x-amz-signature=z",
      `https://a.test/p?token=${MASKED}&page=${MASKED}&API_KEY=${MASKED}&pass=${MASKED}` +
      `&code=${MASKED}&x-amz-signature=${MASKED}`,
    ],
    // Names keep their bytes, encoded or not; empty values and parts stay; a bare part is masked.
    [
      "https://a.test/?q=a%20b+c&pass%77ord=p&secret=&&3f9a0c",
      `https://a.test/?q=${MASKED}&pass%77ord=${MASKED}&secret=&&${MASKED}`,
    ],
    ["https://a.test/cb#access_token=t&state=s", `https://a.test/cb#${MASKED}`],
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

Deno.test("maskUrl shows a URL whose kind has no room for a credential whole", () => {
  for (const url of ["dns://192.0.2.53/example.com?type=MX", "tcp://db.example:5432"]) {
    assert.equal(maskUrl(url), url);
  }
  assert.equal(maskUrl("https://example.com/?type=MX"), "https://example.com/?type=****");
});
