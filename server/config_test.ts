import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "./config.ts";

Deno.test("with nothing set, the defaults serve on 127.0.0.1:8000 from ./data", () => {
  assert.deepEqual(parseConfig({}), {
    port: 8000,
    host: "127.0.0.1",
    apiKeys: undefined,
    databaseUrl: undefined,
    dataDir: "./data",
    logLevel: "info",
  });
});

Deno.test("empty variables count as unset", () => {
  assert.equal(parseConfig({ PORT: "", DATABASE_URL: " " }).port, 8000);
});

Deno.test("SERVICE_API_KEY holds comma-separated keys for rotation", () => {
  assert.deepEqual(parseConfig({ SERVICE_API_KEY: " first-key-1, second-key-2 ," }).apiKeys, [
    "first-key-1",
    "second-key-2",
  ]);
});

Deno.test("a bad value stops start-up with a message naming the variable", () => {
  const cases: Record<string, string>[] = [
    { PORT: "eighty" },
    { PORT: "70000" },
    { DATABASE_URL: "mysql://x" },
    { LOG_LEVEL: "loud" },
    { SERVICE_API_KEY: "," },
    { SERVICE_API_KEY: "short" },
  ];
  for (const env of cases) {
    const [name] = Object.keys(env);
    assert.throws(() => parseConfig(env), (e: unknown) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, new RegExp(name));
      return true;
    });
  }
});
