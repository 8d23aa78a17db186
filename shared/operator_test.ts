import assert from "node:assert/strict";
import { DEFAULT_SERVICE_URL, noApiKeyMessage, operatorApiKey, serviceUrlOf } from "./operator.ts";

/** A folder of files by path; reading any other path fails as a missing file does. */
const files = (held: Record<string, string>) => (path: string) =>
  path in held ? Promise.resolve(held[path]) : Promise.reject(new Deno.errors.NotFound(path));

Deno.test("the service's URL: the one given, then PROBE_SERVICE_URL, then the default", () => {
  const env = { PROBE_SERVICE_URL: "http://monitor:9000" };
  assert.equal(serviceUrlOf("http://given:1", env), "http://given:1");
  assert.equal(serviceUrlOf(undefined, env), "http://monitor:9000");
  assert.equal(serviceUrlOf("", {}), DEFAULT_SERVICE_URL);
  assert.equal(serviceUrlOf(undefined, { PROBE_SERVICE_URL: "" }), DEFAULT_SERVICE_URL);
});

Deno.test("the key: the first of SERVICE_API_KEY's list before the saved one", async () => {
  const read = files({ "./data/api-key": "saved-key-123\n" });
  assert.equal(
    await operatorApiKey({ SERVICE_API_KEY: " , first-key1, second-k" }, read),
    "first-key1",
  );
  assert.equal(await operatorApiKey({ SERVICE_API_KEY: " , " }, read), "saved-key-123");
});

Deno.test("the saved key is read from DATA_DIR, else ./data; none is undefined", async () => {
  const read = files({ "/srv/probe/api-key": "  elsewhere-key \n", "./data/api-key": "\n" });
  assert.equal(await operatorApiKey({ DATA_DIR: "/srv/probe" }, read), "elsewhere-key");
  assert.equal(await operatorApiKey({}, read), undefined, "an empty file is no key");
  assert.equal(await operatorApiKey({ DATA_DIR: "/nowhere" }, read), undefined);
});

Deno.test("the message without a key names the file it looked for", () => {
  assert.match(noApiKeyMessage({}), /^No API key: .*\(no \.\/data\/api-key here\)$/);
  assert.match(
    noApiKeyMessage({ DATA_DIR: "/srv/probe" }, "; see --help"),
    /\(no \/srv\/probe\/api-key here; see --help\)$/,
  );
});
