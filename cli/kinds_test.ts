/**
 * tcp://, tls:// and dns:// probes through the CLI: created (a tcp probe's text to send with
 * `--send`), listed (no method for a kind that has none), run, refused where the kind has no use
 * for a field; and through `export` then `import --prune` into an empty service, which keeps
 * every kind and field. The CLI runs in-process against real apps, on PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { backends, startTestApp, uniqueName } from "../server/testing/app.ts";
import { EXIT } from "./exit_codes.ts";
import { expectExit, runCliOn } from "./testing.ts";
import { parseSeedFile, SeedFileError } from "./seed.ts";

/** A TCP listener on loopback that answers each line `PING` with `+PONG`. */
function pongServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buffer = new Uint8Array(64);
        const n = await conn.read(buffer).catch(() => null);
        if (n && new TextDecoder().decode(buffer.subarray(0, n)).startsWith("PING")) {
          await conn.write(new TextEncoder().encode("+PONG\r\n")).catch(() => {});
        }
        conn.close();
      })();
    }
  })();
  return {
    port: listener.addr.port,
    close: async () => {
      listener.close();
      await serving.catch(() => {});
    },
  };
}

for (const backend of backends()) {
  Deno.test(`the CLI's tcp, tls and dns probes, and their export and seed [${backend}]`, async (t) => {
    const source = await startTestApp(backend);
    const copy = await startTestApp(backend);
    const pong = pongServer();
    try {
      const project = uniqueName("ck");
      expectExit(await runCliOn(source, ["projects", "create", project]), EXIT.ok);
      const tcpUrl = `tcp://127.0.0.1:${pong.port}`;

      await t.step("create, list and run a tcp probe that sends text", async () => {
        const created = expectExit(
          await runCliOn(source, [
            "--json",
            "probes",
            "create",
            project,
            tcpUrl,
            "--send",
            "PING\\r\\n",
            "--expect",
            '{"body":{"contains":["+PONG"]}}',
            "--label",
            "cache",
          ]),
          EXIT.ok,
        );
        const id = created.json().data.probe_id;
        const got = expectExit(
          await runCliOn(source, ["--json", "probes", "get", project, id]),
          EXIT.ok,
        ).json().data;
        assert.equal(got.url, tcpUrl);
        assert.equal(got.body, "PING\r\n");
        assert.deepEqual(got.expect, { body: { contains: ["+PONG"] } });

        const list = expectExit(
          await runCliOn(source, ["probes", "list", "--project", project]),
          EXIT.ok,
        ).stdout;
        const [head, row] = list.trim().split("\n");
        assert.match(head, /^PROJECT\s+PROBE_ID\s+METHOD\s+URL\s/);
        assert.match(row, new RegExp(`^${project}\\s+${id}\\s+-\\s+tcp://127\\.0\\.0\\.1:\\d+\\s`));

        const ran = expectExit(
          await runCliOn(source, ["--json", "probes", "run", project, id]),
          EXIT.ok,
        ).json().data;
        assert.equal(ran.outcome, "up", JSON.stringify(ran));
        assert.equal(ran.http_status, null);
      });

      await t.step("a field the kind has no use for is refused, naming it", async () => {
        const refused = await runCliOn(source, [
          "probes",
          "create",
          project,
          "tcp://127.0.0.1:9",
          "--method",
          "POST",
        ]);
        assert.equal(refused.code, EXIT.invalid, refused.stderr);
        assert.match(refused.stderr, /method/);
        assert.match(refused.stderr, /tcp:\/\/host:port probes take no method/);
      });

      await t.step(
        "export, then import --prune into an empty service, keeps each kind",
        async () => {
          for (
            const args of [
              ["tls://mail.example.test:465", "--send", "EHLO x\\r\\n", "--latency", "800"],
              [
                "dns://192.0.2.53/example.test?type=MX",
                "--expect",
                '{"json":[{"path":"","op":"contains","value":"10 mail.example.test"}]}',
              ],
              ["https://shop.example.test/health", "--method", "HEAD"],
            ]
          ) {
            expectExit(await runCliOn(source, ["probes", "create", project, ...args]), EXIT.ok);
          }
          const exported = expectExit(await runCliOn(source, ["export"]), EXIT.ok).stdout;
          const seed = parseYaml(exported) as {
            projects: { project: string; probes: Record<string, unknown>[] }[];
          };
          const probes = seed.projects.find((p) => p.project === project)!.probes;
          for (const probe of probes) {
            const http = String(probe.url).startsWith("http");
            assert.equal("method" in probe, http, `method of ${probe.url}`);
          }
          const files = new Map([["config.yaml", exported]]);
          expectExit(
            await runCliOn(copy, ["import", "config.yaml", "--prune"], { files }),
            EXIT.ok,
          );
          const strip = (run: { json: () => { data: Record<string, unknown>[] } }) =>
            run.json().data.map((p) => ({
              url: p.url,
              method: p.method,
              headers: p.headers,
              body: p.body,
              latency: p.latency,
              label: p.label,
              expect: p.expect,
            }));
          const list = ["--json", "probes", "list", "--project", project];
          assert.deepEqual(
            strip(expectExit(await runCliOn(copy, list), EXIT.ok)),
            strip(expectExit(await runCliOn(source, list), EXIT.ok)),
          );
          assert.equal(
            expectExit(await runCliOn(copy, ["export"]), EXIT.ok).stdout,
            exported,
            "the copy exports the same text",
          );
          // Loaded again, nothing changes.
          const again = expectExit(
            await runCliOn(copy, ["--json", "import", "config.yaml", "--prune"], { files }),
            EXIT.ok,
          ).json();
          assert.doesNotMatch(JSON.stringify(again), /"(created|updated|deleted)":[1-9]/);
        },
      );
    } finally {
      await pong.close();
      await source.close();
      await copy.close();
    }
  });
}

Deno.test("a seed file's probe asking what its kind cannot do is refused before anything is sent", () => {
  const text = JSON.stringify({
    projects: [{
      project: "shop",
      probes: [
        { url: "tcp://db.example.test:5432", method: "POST" },
        { url: "dns://192.0.2.53/example.test", headers_env: { "X-Key": "KEY" } },
        { url: "tls://mail.example.test:465", expect: { status: [200] } },
      ],
    }],
  });
  assert.throws(() => parseSeedFile(text, "kinds.json"), (error: Error) => {
    assert.ok(error instanceof SeedFileError);
    assert.match(
      error.message,
      /projects\.0\.probes\.0\.method: tcp:\/\/host:port probes take no method/,
    );
    assert.match(
      error.message,
      /projects\.0\.probes\.1\.headers: dns:\/\/.* probes take no headers/,
    );
    assert.match(
      error.message,
      /projects\.0\.probes\.2\.expect\.status: tls:\/\/host:port probes cannot check status/,
    );
    return true;
  });
});
