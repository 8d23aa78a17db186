/**
 * The dashboard's kinds (`server/ui/kinds.js`): its mirror of `shared/kinds/` is equal to it, so
 * the two cannot drift; the form's parts of a URL are the URL the API stores; the assertions
 * form makes for each kind only what the kind takes, which the API stores as made; the probe
 * page's words for each kind's checks and failures.
 */
import assert from "node:assert/strict";
import type { ProbeExpect } from "@probe/shared";
import { DNS_TYPES as SHARED_DNS_TYPES } from "../../shared/kinds/dns.ts";
import { KINDS as SHARED_KINDS, normalizeProbeUrl } from "../../shared/kinds/mod.ts";
import { apiSuite, uniqueName } from "../testing/app.ts";
import { DNS_TYPES, kindNamed, kindOf, KINDS, urlOf, urlPartAt, urlParts } from "../ui/kinds.js";
import { assertionErrors, assertionLines, assertionsState, expectOf } from "../ui/assertions.js";
import { failureWords } from "../ui/failure_words.js";

Deno.test("the dashboard's kinds are shared/kinds' kinds: names, schemes, fields and checks", () => {
  assert.deepEqual(
    KINDS.map((k) => ({ name: k.name, schemes: k.schemes, uses: k.uses, expects: k.expects })),
    SHARED_KINDS.map((k) => ({
      name: k.name,
      schemes: k.schemes,
      uses: k.uses,
      expects: k.expects,
    })),
  );
  assert.deepEqual(DNS_TYPES, [...SHARED_DNS_TYPES]);
});

Deno.test("a URL's kind, and its parts and back, as the API stores it", () => {
  assert.equal(kindOf("https://a.example/").name, "http");
  assert.equal(kindOf("TCP://db:5432").name, "tcp");
  assert.equal(kindOf("not a url").name, "http", "a URL being typed is HTTP's field");
  const cases: [string, string][] = [
    ["tcp", "tcp://db.example.com:5432"],
    ["tcp", "tcp://[::1]:6379"],
    ["tls", "tls://mail.example.com:465"],
    ["dns", "dns://1.1.1.1/example.com?type=MX"],
    ["dns", "dns://127.0.0.1:5353/example.com?type=A"],
  ];
  for (const [kind, url] of cases) {
    const stored = normalizeProbeUrl(url);
    assert.equal(typeof stored, "string", url);
    assert.equal(kindOf(stored as string).name, kind);
    assert.equal(normalizeProbeUrl(urlOf(kindNamed(kind), urlParts(stored as string))), stored);
  }
  assert.deepEqual(urlParts("dns://9.9.9.9/example.org?type=TXT"), {
    host: "9.9.9.9",
    port: "",
    name: "example.org",
    type: "TXT",
  });
  assert.equal(
    urlOf(kindNamed("tcp"), { host: " ::1 ", port: " 22 ", name: "", type: "A" }),
    "tcp://[::1]:22",
  );
});

Deno.test("the API's URL messages land on the part they are about", () => {
  const at = (url: string) => {
    const normalized = normalizeProbeUrl(url);
    assert.equal(typeof normalized, "object", url);
    return urlPartAt((normalized as { problem: string }).problem);
  };
  assert.equal(at("tcp://db.example.com"), "port");
  assert.equal(at("tcp://db.example.com:99999"), "port");
  assert.equal(at("dns://1.1.1.1/?type=A"), "name");
  assert.equal(at("dns://1.1.1.1/example.com?type=SRV"), "type");
  assert.equal(at("tcp://user:pw@db:5432"), "host");
});

Deno.test("the assertions form makes only what each kind takes", () => {
  const tcp = kindNamed("tcp");
  const tls = kindNamed("tls");
  const dns = kindNamed("dns");
  const state = assertionsState(null);
  state.status = "200";
  state.contains = "+PONG";
  state.records = "192.0.2.1\n\n192.0.2.2";
  state.json = [{ path: "/0", op: "eq", type: "text", value: "192.0.2.1" }];
  state.headers = [{ name: "Server", op: "exists", value: "" }];
  state.certificate_days = "14";
  assert.deepEqual(expectOf(state, tcp), { body: { contains: ["+PONG"] } });
  assert.deepEqual(expectOf(state, tls), { body: { contains: ["+PONG"] }, certificate_days: 14 });
  const forDns: ProbeExpect = {
    body: { contains: ["+PONG"] },
    json: [
      { path: "", op: "contains", value: "192.0.2.1" },
      { path: "", op: "contains", value: "192.0.2.2" },
      { path: "/0", op: "eq", value: "192.0.2.1" },
    ],
  };
  assert.deepEqual(expectOf(state, dns), forDns);
  // And back: a record check is a line of "A record equals", the others stay JSON checks.
  const back = assertionsState(forDns, dns);
  assert.equal(back.records, "192.0.2.1\n192.0.2.2");
  assert.deepEqual(back.json, [{ path: "/0", op: "eq", type: "text", value: "192.0.2.1" }]);
  assert.deepEqual(expectOf(back, dns), forDns);
  assert.equal(expectOf(assertionsState(null), tcp), null, "nothing filled in: the kind's rule");
  // A refusal of the second record check goes to its line; of the JSON check after, to its row.
  assert.deepEqual(
    assertionErrors([
      { path: "json.1.value", message: "too long" },
      { path: "json.2.path", message: "bad pointer" },
    ], 2),
    { records: "Line 2: too long", "json.0.path": "Bad pointer" },
  );
});

Deno.test("each kind's checks and failures in words", () => {
  const tcp = kindNamed("tcp");
  const dns = kindNamed("dns");
  assert.deepEqual(assertionLines({ body: { contains: ["+PONG"] } }, tcp), [
    'Answer contains "+PONG"',
  ]);
  assert.deepEqual(assertionLines({}, tcp), [], "no status rule for a TCP probe");
  assert.deepEqual(
    assertionLines({ json: [{ path: "", op: "contains", value: "192.0.2.1" }] }, dns),
    ['A record equals "192.0.2.1"'],
  );
  const failed = [{
    check: "body.contains.0",
    expected: 'body contains "+PONG"',
    seen: "-ERR",
  }];
  assert.equal(
    failureWords({ error: "assertion failed", failed_checks: failed }, tcp),
    'answer did not contain "+PONG"',
  );
  assert.equal(
    failureWords({ error: "assertion failed", failed_checks: failed }),
    'body did not contain "+PONG"',
    "HTTP's words unchanged",
  );
  // Errors of the kinds are words already: kept as they are.
  for (
    const error of [
      "connection refused",
      "timed out after 5000 ms connecting",
      "no such name: nothing.example",
      "the resolver failed (SERVFAIL)",
      "no answer from the resolver within 2000 ms",
    ]
  ) {
    assert.equal(failureWords({ error, failed_checks: null }, tcp), error);
  }
});

apiSuite("the probe form's kinds against the API", (test) => {
  test("what the form makes for TCP, TLS and DNS is stored as made; its URL read back as its parts", async ({ api }) => {
    const project = uniqueName("fk");
    assert.equal((await api.post("/api/v1/projects", { project })).status, 201);
    const state = assertionsState(null);
    state.status = "200";
    state.contains = "ok";
    state.records = "192.0.2.1";
    state.certificate_days = "7";
    for (
      const [name, parts] of [
        ["tcp", { host: "db.example.test", port: "5432", name: "", type: "A" }],
        ["tls", { host: "mail.example.test", port: "465", name: "", type: "A" }],
        ["dns", { host: "192.0.2.53", port: "", name: "example.test", type: "MX" }],
      ] as const
    ) {
      const kind = kindNamed(name);
      const expect = expectOf(state, kind);
      const created = await api.post(`/api/v1/projects/${project}/probes`, {
        url: urlOf(kind, parts),
        expect,
        ...(kind.uses.body && { body: "PING\r\n" }),
      });
      assert.equal(created.status, 201, created.text);
      const read = await api.get(
        `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`,
      );
      assert.deepEqual(read.body.data.expect, expect);
      assert.deepEqual(urlParts(read.body.data.url), parts);
      assert.equal(kindOf(read.body.data.url), kind);
      // The form's edit of it: every field it sends for this kind is accepted.
      const patched = await api.patch(
        `/api/v1/projects/${project}/probes/${created.body.data.probe_id}`,
        {
          url: urlOf(kind, parts),
          latency: 500,
          interval_seconds: null,
          timeout_ms: null,
          locations: null,
          label: `${name} probe`,
          expect: expectOf(assertionsState(read.body.data.expect, kind), kind),
          body: kind.uses.body ? "QUIT\r\n" : null,
        },
      );
      assert.equal(patched.status, 200, patched.text);
    }
    // A port missing: the API's message, which the form puts beside the port.
    const refused = await api.post(`/api/v1/projects/${project}/probes`, {
      url: urlOf(kindNamed("tcp"), { host: "db.example.test", port: "", name: "", type: "A" }),
    });
    assert.equal(refused.status, 422, refused.text);
    const detail = refused.body.error.details.find((d: { path: string }) => d.path === "url");
    assert.equal(urlPartAt(detail.message), "port");
  });
});
