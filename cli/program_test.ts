import assert from "node:assert/strict";
import { EXIT } from "./exit_codes.ts";
import { runCliOn } from "./testing.ts";

/** Runs the CLI in-process with no service behind it: for what needs none (help, usage). */
const offline = (args: string[]) => runCliOn(null, args);

const COMMANDS: Record<string, string[]> = {
  projects: ["list", "get", "status", "create", "update", "delete"],
  probes: ["list", "get", "create", "update", "delete"],
  results: ["list", "stats", "series"],
  "status-page": ["get", "set"],
  badges: ["list", "create", "rotate", "delete"],
  locations: ["list", "show", "add", "update", "rotate", "delete"],
  heartbeats: ["create", "list", "get", "update", "delete", "pings"],
  settings: ["get", "set", "test", "deliveries"],
  audit: ["list"],
  keys: ["list", "show", "create", "update", "rotate", "delete"],
};

Deno.test("--help works on every level and exits 0", async (t) => {
  const levels = [
    [],
    ...Object.entries(COMMANDS).flatMap(([resource, verbs]) => [
      [resource],
      ...verbs.map((verb) => [resource, verb]),
    ]),
    ["import"],
    ["export"],
    ["overview"],
    ["whoami"],
  ];
  for (const level of levels) {
    await t.step(level.join(" ") || "(root)", async () => {
      const { code, stdout } = await offline([...level, "--help"]);
      assert.equal(code, EXIT.ok);
      assert.match(stdout, new RegExp(`^Usage: deno task cli ${level.join(" ")}`));
    });
  }
});

Deno.test("the root help lists the resources, the environment and the exit statuses", async () => {
  const { stdout } = await offline(["--help"]);
  for (
    const word of [
      "overview",
      "projects",
      "probes",
      "results",
      "status-page",
      "badges",
      "locations",
      "heartbeats",
      "settings",
      "import",
      "whoami",
      "audit",
      "keys",
      "PROBE_SERVICE_URL",
    ]
  ) {
    assert.match(stdout, new RegExp(`^ {2}${word}\\b`, "m"));
  }
  assert.match(stdout, /SERVICE_API_KEY/);
  assert.match(stdout, /4 {2}project or probe not found \(404\)/);
});

Deno.test("a resource without a verb shows its help and exits 2", async () => {
  const { code, stderr } = await offline(["probes"]);
  assert.equal(code, EXIT.usage);
  assert.match(stderr, /Usage: deno task cli probes/);
});

Deno.test("--enable and --disable together are a usage error", async () => {
  const { code, stderr } = await offline(["settings", "set", "--enable", "--disable"]);
  assert.equal(code, EXIT.usage);
  assert.match(stderr, /cannot be used with/);
});

Deno.test("a bad --method or --header is a usage error, before any call", async () => {
  const method = await offline(["probes", "create", "p", "http://x/", "--method", "FETCH"]);
  assert.equal(method.code, EXIT.usage);
  assert.match(method.stderr, /Not one of GET/);
  const header = await offline(["probes", "create", "p", "http://x/", "--header", "nocolon"]);
  assert.equal(header.code, EXIT.usage);
});

Deno.test("an unknown --window or a --limit that is not a number is a usage error", async () => {
  const window = await offline(["results", "stats", "p", "0123456789abcdef", "--window", "2h"]);
  assert.equal(window.code, EXIT.usage);
  assert.match(window.stderr, /Allowed choices are 1h, 24h, 7d, 30d, 90d/);
  const limit = await offline(["results", "list", "p", "0123456789abcdef", "--limit", "all"]);
  assert.equal(limit.code, EXIT.usage);
  assert.match(limit.stderr, /Not a whole number/);
});

Deno.test("a series --window other than 1h, 6h, 24h, 7d, 30d, 90d and a bad --origin are usage errors", async () => {
  const window = await offline(["results", "series", "p", "0123456789abcdef", "--window", "2h"]);
  assert.equal(window.code, EXIT.usage);
  assert.match(window.stderr, /Allowed choices are 1h, 6h, 24h, 7d, 30d, 90d/);
  const origin = await offline(["badges", "create", "p", "--origin", "ftp://x.example"]);
  assert.equal(origin.code, EXIT.usage);
  assert.match(origin.stderr, /Not an http\(s\) URL/);
});
