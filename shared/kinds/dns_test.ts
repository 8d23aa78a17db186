/** `dns://` URLs as stored: the resolver, the name and the type normalised, or refused in words. */
import assert from "node:assert/strict";
import { dnsQueryOf } from "./dns.ts";
import { normalizeProbeUrl } from "./mod.ts";

Deno.test("a dns:// URL is stored with its name in lower case, its type in upper case, port 53 implied", () => {
  assert.equal(
    normalizeProbeUrl("dns://1.1.1.1/Example.COM?type=mx"),
    "dns://1.1.1.1/example.com?type=MX",
  );
  assert.equal(
    normalizeProbeUrl("DNS://1.1.1.1:53/example.com"),
    "dns://1.1.1.1/example.com?type=A",
  );
  assert.equal(
    normalizeProbeUrl("dns://Resolver.Example:5353/_dmarc.example.com?type=TXT"),
    "dns://resolver.example:5353/_dmarc.example.com?type=TXT",
  );
  assert.equal(
    normalizeProbeUrl("dns://[::1]:5300/example.com?type=AAAA"),
    "dns://[::1]:5300/example.com?type=AAAA",
  );
});

Deno.test("a fully qualified name loses its trailing dot; an internationalised one is queried in ASCII", () => {
  assert.equal(
    normalizeProbeUrl("dns://9.9.9.9/example.com.?type=NS"),
    "dns://9.9.9.9/example.com?type=NS",
  );
  assert.equal(
    normalizeProbeUrl("dns://9.9.9.9/bücher.example"),
    "dns://9.9.9.9/xn--bcher-kva.example?type=A",
  );
  assert.equal(
    normalizeProbeUrl("dns://9.9.9.9/B%C3%BCcher.Example."),
    "dns://9.9.9.9/xn--bcher-kva.example?type=A",
  );
});

Deno.test("a dns:// URL without a valid name, with another type or other parameters is refused in words", () => {
  const problem = (url: string) => {
    const stored = normalizeProbeUrl(url);
    assert.equal(typeof stored, "object", `${url} is refused`);
    return (stored as { problem: string }).problem;
  };
  assert.match(problem("dns://1.1.1.1/"), /must name a domain/);
  assert.match(problem("dns://1.1.1.1/a..b"), /must name a domain/);
  assert.match(problem("dns://1.1.1.1/example.com.."), /must name a domain/);
  assert.match(problem("dns://1.1.1.1/exa mple.com"), /must name a domain/);
  assert.match(problem("dns://1.1.1.1/%E0%A4%A"), /must name a domain/);
  assert.match(problem(`dns://1.1.1.1/${"a".repeat(64)}.com`), /must name a domain/);
  assert.match(problem("dns://1.1.1.1/example.com?type=SOA"), /type must be one of A, AAAA/);
  assert.match(problem("dns://1.1.1.1/example.com?type=A&type=MX"), /one query parameter/);
  assert.match(problem("dns://1.1.1.1/example.com?class=IN"), /one query parameter/);
  assert.match(problem("dns://1.1.1.1:0/example.com"), /port/);
  assert.match(problem("dns://user:pw@1.1.1.1/example.com"), /user name or password/);
});

Deno.test("dnsQueryOf reads a stored URL's resolver, port, name and type", () => {
  assert.deepEqual(dnsQueryOf("dns://1.1.1.1/example.com?type=MX"), {
    host: "1.1.1.1",
    port: 53,
    name: "example.com",
    type: "MX",
  });
  assert.deepEqual(dnsQueryOf("dns://[::1]:5300/xn--bcher-kva.example?type=AAAA"), {
    host: "::1",
    port: 5300,
    name: "xn--bcher-kva.example",
    type: "AAAA",
  });
});
