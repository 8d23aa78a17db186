/**
 * The URL rules of every kind: how each URL is stored, each refusal in its words, and what each
 * kind refuses of a definition (`dns_test.ts` has the rest of dns://).
 */
import assert from "node:assert/strict";
import { KIND_FORMS, kindOf, kindProblems, KINDS, normalizeProbeUrl } from "./mod.ts";

const ANY_FORM = `must be an absolute URL of one of the forms ${KIND_FORMS}`;

Deno.test("the kinds, in order, and the kind each scheme names", () => {
  assert.deepEqual(KINDS.map((k) => k.name), ["http", "tcp", "tls", "dns"]);
  assert.equal(
    KIND_FORMS,
    "http(s)://host[:port]/path, tcp://host:port, tls://host:port, " +
      "dns://resolver[:port]/name?type=A|AAAA|CNAME|MX|TXT|NS",
  );
  assert.equal(kindOf("HTTPS://a.test/")?.name, "http");
  assert.equal(kindOf("TCP://a.test:1")?.name, "tcp");
  assert.equal(kindOf("tls://a.test:1")?.name, "tls");
  assert.equal(kindOf("dns://1.1.1.1/a.test")?.name, "dns");
  for (const none of ["ftp://a.test/", "heartbeat://x", "no scheme", ""]) {
    assert.equal(kindOf(none), null, none);
  }
});

Deno.test("http(s) URLs are stored as WHATWG reads them, without their fragment", () => {
  assert.equal(normalizeProbeUrl("http://Example.COM/a?b=1#top"), "http://example.com/a?b=1");
  assert.equal(normalizeProbeUrl("HTTPS://example.com"), "https://example.com/");
  assert.equal(normalizeProbeUrl("http://0x7f.1:8080/x"), "http://127.0.0.1:8080/x");
});

Deno.test("tcp and tls URLs are stored as host:port, the host read as an http URL's", () => {
  const stored: [string, string][] = [
    ["TCP://DB.Example.com:5432/", "tcp://db.example.com:5432"],
    ["tcp://0x7f.1:6379", "tcp://127.0.0.1:6379"],
    ["tcp://[::1]:25", "tcp://[::1]:25"],
    ["tcp://[::FFFF:127.0.0.1]:25", "tcp://[::ffff:7f00:1]:25"],
    ["tcp://db.test:080", "tcp://db.test:80"],
    ["tcp://db.test:80#fragment", "tcp://db.test:80"],
    ["tls://bücher.example:443", "tls://xn--bcher-kva.example:443"],
    ["TLS://Mail.Example.com:465", "tls://mail.example.com:465"],
  ];
  for (const [sent, want] of stored) assert.equal(normalizeProbeUrl(sent), want, sent);
});

Deno.test("dns URLs are stored with their type, port 53 implied", () => {
  assert.equal(
    normalizeProbeUrl("dns://1.1.1.1:53/Example.com?type=txt"),
    "dns://1.1.1.1/example.com?type=TXT",
  );
});

Deno.test("each refusal of a URL, in its words", () => {
  const refused: [string, string][] = [
    ["ftp://files.test/", ANY_FORM],
    ["not a URL", ANY_FORM],
    ["tcp://db.test", "must name a port (host:port)"],
    ["tls://db.test", "must name a port (host:port)"],
    ["tcp://db.test:0", "must name a port from 1 to 65535"],
    ["tcp://db.test:5432/path", "must have no path"],
    ["tls://db.test:443?sni=x", "must have no query"],
    ["tcp://user:secret@db.test:5432", "must not hold a user name or password"],
    ["tcp:db.test:5432", "must name a host"],
    ["tcp:///x", "must name a host"],
    ["tcp://999.1.1.1:1", "must name a valid host"],
    ["tcp://a%2Fb:1", "must name a valid host"],
    [
      "dns://1.1.1.1/",
      "must name a domain to query after the resolver: dns://resolver/example.com",
    ],
    ["dns://1.1.1.1/a.test?type=SOA", "type must be one of A, AAAA, CNAME, MX, TXT, NS"],
    ["dns://1.1.1.1/a.test?type=A&x=1", "takes one query parameter, type"],
  ];
  for (const [sent, problem] of refused) {
    assert.deepEqual(normalizeProbeUrl(sent), { problem }, sent);
  }
});

Deno.test("what a kind has no use for is refused, by path and in words", () => {
  const sent = {
    method: "POST",
    headers: { "X-A": "1" },
    body: { ping: true },
    expect: {
      status: [200],
      body: { contains: ["ok"] },
      json: [{ path: "/a", op: "exists" as const }],
      headers: [{ name: "server", op: "exists" as const }],
      certificate_days: 7,
    },
  };
  const problems = (url: string) =>
    kindProblems({ url, ...sent }).map((p) => `${p.path.join(".")}: ${p.message}`);
  assert.deepEqual(problems("http://a.test/"), [], "http takes every field and check");
  assert.deepEqual(problems("tcp://a.test:1"), [
    "method: tcp://host:port probes take no method",
    "headers: tcp://host:port probes take no headers",
    "expect.status: tcp://host:port probes cannot check status",
    "expect.json: tcp://host:port probes cannot check json",
    "expect.headers: tcp://host:port probes cannot check headers",
    "expect.certificate_days: tcp://host:port probes cannot check certificate_days",
    "body: must be text: the bytes sent once connected, as UTF-8",
  ]);
  assert.deepEqual(problems("tls://a.test:1"), [
    "method: tls://host:port probes take no method",
    "headers: tls://host:port probes take no headers",
    "expect.status: tls://host:port probes cannot check status",
    "expect.json: tls://host:port probes cannot check json",
    "expect.headers: tls://host:port probes cannot check headers",
    "body: must be text: the bytes sent once connected, as UTF-8",
  ]);
  const dns = "dns://resolver[:port]/name?type=A|AAAA|CNAME|MX|TXT|NS";
  assert.deepEqual(problems("dns://1.1.1.1/a.test"), [
    `method: ${dns} probes take no method`,
    `headers: ${dns} probes take no headers`,
    `body: ${dns} probes take no body`,
    `expect.status: ${dns} probes cannot check status`,
    `expect.headers: ${dns} probes cannot check headers`,
    `expect.certificate_days: ${dns} probes cannot check certificate_days`,
  ]);
});

Deno.test("the defaults a read shows are no use of a field, so a read can be written back", () => {
  const read = { url: "tcp://a.test:1", method: "GET", headers: {}, body: null, expect: null };
  assert.deepEqual(kindProblems(read), []);
  assert.deepEqual(kindProblems({ ...read, body: "PING\r\n" }), []);
  assert.deepEqual(
    kindProblems({ ...read, method: "POST", headers: { a: "b" } }).map((p) => p.path),
    [["method"], ["headers"]],
  );
  assert.deepEqual(kindProblems({ url: "ftp://a.test/", method: "POST" }), [], "no kind, no rules");
});
