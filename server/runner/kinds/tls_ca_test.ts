/**
 * `PROBE_CA_FILE`: the way to trust a private certificate authority outside tests. The setting is
 * read as the service reads it (`parseConfig`), a missing or certificate-less file refused at
 * start; `tls://` and `https://` probes run by the configured executor (the one run-now and the
 * runner use) trust that CA besides the system's, twice in a row (the second run starts with
 * the authority that passed the first: `server/base/outbound/trust.ts`), and without the setting
 * the same server is an untrusted chain. A TLS server on loopback with a leaf of a test CA of its own
 * (`testdata/private_ca.pem`, `testdata/loopback.pem` for 127.0.0.1). On both databases, through
 * the REST interface's run-now.
 */
import assert from "node:assert/strict";
import https from "node:https";
import tls from "node:tls";
import type net from "node:net";
import { createApp } from "../../app.ts";
import { ConfigError, parseConfig } from "../../base/config.ts";
import { createLogger } from "../../base/log.ts";
import {
  backends,
  freshDatabase,
  TEST_API_KEY,
  TestClient,
  uniqueName,
} from "../../testing/app.ts";
import { executorFromConfig } from "../configure.ts";

const TESTDATA = new URL("./testdata/", import.meta.url);
const CA_FILE = new URL("private_ca.pem", TESTDATA).pathname;
const read = (name: string) => Deno.readTextFileSync(new URL(name, TESTDATA));

Deno.test("PROBE_CA_FILE: a PEM file read at start, trusted besides the system's authorities", async () => {
  const config = parseConfig({ PROBE_CA_FILE: CA_FILE });
  assert.ok(config.probeCa?.includes(read("private_ca.pem").trim()));
  assert.ok(config.probeCa!.includes(tls.rootCertificates[0]), "the system's too");
  assert.equal(parseConfig({}).probeCa, undefined);
  assert.throws(
    () => parseConfig({ PROBE_CA_FILE: "/nonexistent/ca.pem" }),
    (e: unknown) =>
      e instanceof ConfigError &&
      /PROBE_CA_FILE: cannot read \/nonexistent\/ca\.pem/.test(e.message),
  );
  const empty = await Deno.makeTempFile({ suffix: ".pem" });
  try {
    await Deno.writeTextFile(empty, "not a certificate\n");
    assert.throws(
      () => parseConfig({ PROBE_CA_FILE: empty }),
      (e: unknown) => e instanceof ConfigError && /holds no PEM certificate/.test(e.message),
    );
  } finally {
    await Deno.remove(empty);
  }
});

for (const backend of backends()) {
  Deno.test(`PROBE_CA_FILE: tls:// and https:// probes of a private CA's server, run now [${backend}]`, async () => {
    const sockets = new Set<net.Socket>();
    const keep = (socket: net.Socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    };
    const credentials = { key: read("leaf.key"), cert: read("loopback.pem") };
    const server = tls.createServer(credentials, (socket) => {
      keep(socket);
      socket.end("hello\n");
    });
    server.on("tlsClientError", () => {});
    const web = https.createServer(credentials, (_request, response) => response.end("ok"));
    web.on("connection", keep);
    web.on("tlsClientError", () => {});
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    const webPort = (web.address() as net.AddressInfo).port;
    const database = await freshDatabase(backend);
    const env = { PROBE_ALLOW_NETWORKS: "127.0.0.1/32" };
    const trusting = await createApp({
      database,
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      runProbe: executorFromConfig(parseConfig({ ...env, PROBE_CA_FILE: CA_FILE })),
    });
    const plain = await createApp({
      database: await freshDatabase(backend),
      apiKeys: [TEST_API_KEY],
      log: createLogger("silent"),
      runProbe: executorFromConfig(parseConfig(env)),
    });
    try {
      const runOn = async (app: typeof trusting, url: string) => {
        const api = new TestClient(app.handler);
        const project = uniqueName("ca");
        assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
        const created = await api.post(`/api/v1/projects/${project}/probes`, { url });
        assert.equal(created.status, 201, created.text);
        const path = `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`;
        const runs = [];
        for (let i = 0; i < 2; i++) {
          const answer = await api.post(`${path}/run`);
          assert.equal(answer.status, 200, answer.text);
          runs.push(answer.body.data);
        }
        return runs;
      };
      // Each kind's words for a chain it cannot trust: tls:// says it in words, https:// gives
      // the handshake's code as every TLS failure of an HTTP probe does.
      const refusals = [
        [`tls://127.0.0.1:${port}`, /^untrusted certificate chain/],
        [`https://127.0.0.1:${webPort}/`, /^TLS: UNABLE_TO_VERIFY_LEAF_SIGNATURE$/],
      ] as const;
      for (const [url, refusal] of refusals) {
        for (const trusted of await runOn(trusting, url)) {
          assert.equal(trusted.error, null, url);
          assert.equal(trusted.outcome, "up", url);
        }
        for (const untrusted of await runOn(plain, url)) {
          assert.equal(untrusted.outcome, "down", url);
          assert.match(String(untrusted.error), refusal, url);
        }
      }
    } finally {
      await trusting.close();
      await plain.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await new Promise<void>((r) => web.close(() => r()));
    }
  });
}
