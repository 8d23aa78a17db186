/**
 * The typed client's locations calls against a real app, in-process, on PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { apiSuite, BASE, TEST_API_KEY, uniqueName } from "../server/testing/app.ts";
import { createProbeClient, ProbeApiError } from "./mod.ts";

apiSuite("typed client: locations", (test) => {
  test("made with a token, listed, read, renamed, rotated, used by probes, deleted", async ({ app }) => {
    const client = createProbeClient({
      baseUrl: BASE,
      apiKey: TEST_API_KEY,
      fetch: (input, init) => app.handler(new Request(input, init)),
    });
    const name = uniqueName("loc");
    const made = await client.locations.create({ name, label: "Office" });
    assert.match(made.data.token, /^plt_/);
    const listed = await client.locations.list();
    assert.equal(listed.data[0].kind, "local");
    assert.ok(listed.data.some((l) => l.name === name));
    assert.equal((await client.locations.get({ location: name })).data.label, "Office");
    assert.equal(
      (await client.locations.update({ location: name, label: "HQ" })).data.label,
      "HQ",
    );
    const rotated = await client.locations.rotateToken({ location: name });
    assert.notEqual(rotated.data.token, made.data.token);

    const project = uniqueName();
    await client.projects.create({ project });
    const probe = await client.probes.create({
      project,
      url: "https://example.com/",
      locations: ["local", name],
    });
    const read = await client.probes.get({ project, probeId: probe.data.probe_id });
    assert.deepEqual(read.data.effective_locations, ["local", name]);
    const results = await client.results.list({
      project,
      probeId: probe.data.probe_id,
      location: name,
    });
    assert.deepEqual(results.data, []);

    const refused = await client.locations.delete({ location: name }).catch((e) => e);
    assert.ok(refused instanceof ProbeApiError);
    assert.equal(refused.code, "conflict");
    await client.probes.update({ project, probeId: probe.data.probe_id, locations: null });
    await client.locations.delete({ location: name });
    const gone = await client.locations.get({ location: name }).catch((e) => e);
    assert.equal(gone.code, "not_found");
  });
});
