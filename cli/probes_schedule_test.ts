/** `probes create|update --interval/--timeout`: a probe's own schedule from the CLI. */
import assert from "node:assert/strict";
import { apiSuite, type TestContext, uniqueName } from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { expectExit, runCliOn } from "./testing.ts";

const cli = ({ app }: TestContext, args: string[]) => runCliOn(app, args);

apiSuite("CLI: a probe's interval and timeout", (test) => {
  test("create sets them, update changes and clears them, list shows them", async (t) => {
    const project = uniqueName();
    expectExit(await cli(t, ["projects", "create", project]), EXIT.ok);
    const created = expectExit(
      await cli(t, [
        "--json",
        "probes",
        "create",
        project,
        "http://127.0.0.1:9/cli",
        "--interval",
        "15",
        "--timeout",
        "750",
      ]),
      EXIT.ok,
    ).json();
    const id: string = created.data.probe_id;
    const read = async () =>
      expectExit(await cli(t, ["--json", "probes", "get", project, id]), EXIT.ok).json().data;
    let probe = await read();
    assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [15, 750]);
    const table = expectExit(await cli(t, ["probes", "list", "--project", project]), EXIT.ok);
    assert.match(table.stdout, /INTERVAL_S\s+TIMEOUT_MS\n.*\s15\s+750\n/);

    expectExit(
      await cli(t, ["probes", "update", project, id, "--interval", "3600", "--no-timeout"]),
      EXIT.ok,
    );
    probe = await read();
    assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [3600, null]);
    expectExit(await cli(t, ["probes", "update", project, id, "--no-interval"]), EXIT.ok);
    probe = await read();
    assert.deepEqual([probe.interval_seconds, probe.timeout_ms], [null, null]);
    const listed = expectExit(await cli(t, ["probes", "list", "--project", project]), EXIT.ok);
    assert.match(listed.stdout, /\sdefault\s+default\n/);

    const bad = expectExit(
      await cli(t, ["probes", "update", project, id, "--interval", "5"]),
      EXIT.invalid,
    );
    assert.match(bad.stderr, /interval_seconds/);
  });
});
