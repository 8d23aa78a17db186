import assert from "node:assert/strict";
import {
  checkAddress,
  checkHost,
  checkOutboundUrl,
  createNetworkPolicy,
  outboundCheck,
  parseNetworks,
  type Resolver,
  reusingResolver,
  systemResolver,
} from "./network_policy.ts";

const closed = createNetworkPolicy();

/** A resolver from a table: no real DNS in these tests. */
const table = (entries: Record<string, string[]>): Resolver => (host) => {
  const found = entries[host];
  if (!found) return Promise.reject(Object.assign(new Error("not found"), { code: "ENOTFOUND" }));
  return Promise.resolve(found);
};

Deno.test("every forbidden range is refused by default, in every literal form", () => {
  const forbidden: [string, string][] = [
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.255", "carrier-grade NAT"],
    ["169.254.169.254", "link-local"],
    ["0.0.0.0", "this network"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "reserved or broadcast"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["[::1]", "loopback"],
    ["fe80::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd12:3456::1", "unique-local"],
    ["fec0::1", "site-local"],
    ["ff02::1", "multicast"],
    // IPv4-mapped, compatible and NAT64 forms reach the IPv4 address inside.
    ["::ffff:127.0.0.1", "loopback (as IPv6)"],
    ["::ffff:7f00:1", "loopback (as IPv6)"],
    ["::ffff:169.254.169.254", "link-local (as IPv6)"],
    ["::ffff:10.0.0.1", "private (as IPv6)"],
    ["::127.0.0.1", "loopback (as IPv6)"],
    ["64:ff9b::a9fe:a9fe", "link-local (as IPv6)"],
    ["2002:c0a8:0101::1", "private (as IPv6)"],
    // Decimal, hex, octal and short IPv4 forms.
    ["2130706433", "loopback"],
    ["0x7f000001", "loopback"],
    ["0x7f.1", "loopback"],
    ["0177.0.0.1", "loopback"],
    ["127.1", "loopback"],
    ["0", "this network"],
    ["2852039166", "link-local"],
    ["0xa9.0xfe.0xa9.0xfe", "link-local"],
  ];
  for (const [literal, range] of forbidden) {
    const verdict = checkAddress(literal, closed);
    assert.equal(verdict.allowed, false, literal);
    assert.equal(!verdict.allowed && verdict.range, range, literal);
  }
});

Deno.test("IPv6 prefixes that carry or hide an IPv4 address are classified", () => {
  const cases: [string, string | null][] = [
    // IPv4-mapped (::ffff:0:0/96): the IPv4 rules on the address inside.
    ["::ffff:127.0.0.1", "loopback (as IPv6)"],
    ["::ffff:192.168.0.1", "private (as IPv6)"],
    ["::ffff:0:0", "this network (as IPv6)"],
    ["::ffff:93.184.216.34", null],
    // IPv4-translated (::ffff:0:0:0/96, RFC 6145): the same.
    ["::ffff:0:127.0.0.1", "loopback (as IPv6)"],
    ["::ffff:0:a9fe:a9fe", "link-local (as IPv6)"],
    ["::ffff:0:5db8:d822", null],
    // Well-known NAT64 (64:ff9b::/96): the same.
    ["64:ff9b::10.0.0.1", "private (as IPv6)"],
    ["64:ff9b::127.0.0.1", "loopback (as IPv6)"],
    ["64:ff9b::93.184.216.34", null],
    // Local-use NAT64 (64:ff9b:1::/48, RFC 8215): refused whole, whatever it carries.
    ["64:ff9b:1::7f00:1", "local-use NAT64"],
    ["64:ff9b:1::5db8:d822", "local-use NAT64"],
    ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use NAT64"],
    // 6to4 (2002::/16): the IPv4 address in bits 16-47.
    ["2002:a00:1::1", "private (as IPv6)"],
    ["2002:7f00:1::1", "loopback (as IPv6)"],
    ["2002:5db8:d822::1", null],
    // Teredo (2001::/32): refused whole.
    ["2001::1", "Teredo"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"],
    ["2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "Teredo"],
    // Just outside those prefixes.
    ["64:ff9b:2::1", null],
    ["2001:1::1", null],
  ];
  for (const [literal, range] of cases) {
    const verdict = checkAddress(literal, closed);
    assert.equal(verdict.allowed ? null : verdict.range, range, literal);
  }
  const open = createNetworkPolicy(parseNetworks("64:ff9b:1::/48, 2001::/32, 127.0.0.0/8"));
  for (const literal of ["64:ff9b:1::7f00:1", "2001::1", "::ffff:0:127.0.0.1"]) {
    assert.equal(checkAddress(literal, open).allowed, true, literal);
  }
});

Deno.test("public addresses pass", () => {
  for (const literal of ["93.184.216.34", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
    assert.equal(checkAddress(literal, closed).allowed, true, literal);
  }
  assert.deepEqual(checkAddress("0x08080808", closed), { allowed: true, address: "8.8.8.8" });
});

Deno.test("a string that is not an address is refused", () => {
  assert.equal(checkAddress("localhost", closed).allowed, false);
  assert.equal(checkAddress("", closed).allowed, false);
});

Deno.test("PROBE_ALLOW_NETWORKS opens exactly the ranges it names", () => {
  const policy = createNetworkPolicy(parseNetworks("127.0.0.0/8, 10.1.0.0/16,::1"));
  assert.equal(checkAddress("127.0.0.1", policy).allowed, true);
  assert.equal(checkAddress("::ffff:127.0.0.1", policy).allowed, true);
  assert.equal(checkAddress("::1", policy).allowed, true);
  assert.equal(checkAddress("10.1.200.3", policy).allowed, true);
  assert.equal(checkAddress("10.2.0.1", policy).allowed, false);
  assert.equal(checkAddress("169.254.169.254", policy).allowed, false);
});

Deno.test("a bad network list names the entry", () => {
  assert.throws(() => parseNetworks("127.0.0.0/8, nonsense"), /nonsense/);
  assert.throws(() => parseNetworks("10.0.0.0/33"), /10\.0\.0\.0\/33/);
  assert.deepEqual(parseNetworks(" , "), []);
});

Deno.test("a host name that resolves to a forbidden address is blocked", async () => {
  const resolve = table({
    "metadata.example": ["169.254.169.254"],
    "mixed.example": ["93.184.216.34", "10.0.0.5"],
    "public.example": ["93.184.216.34", "2606:2800:220:1::1"],
  });
  const meta = await checkOutboundUrl("http://metadata.example/latest", {
    policy: closed,
    resolve,
  });
  assert.deepEqual(meta, {
    ok: false,
    kind: "blocked",
    address: "169.254.169.254",
    reason: "blocked: 169.254.169.254 is link-local (not in PROBE_ALLOW_NETWORKS)",
  });
  const mixed = await checkOutboundUrl("https://mixed.example/", { policy: closed, resolve });
  assert.equal(mixed.ok, false);
  assert.equal(!mixed.ok && mixed.kind, "blocked");
  const pub = await checkOutboundUrl("https://public.example/", { policy: closed, resolve });
  assert.deepEqual(pub, {
    ok: true,
    hostname: "public.example",
    address: "93.184.216.34",
    family: 4,
  });
});

Deno.test("URL hosts in odd IPv4 forms are caught without resolving", async () => {
  const resolve: Resolver = () => Promise.reject(new Error("must not resolve"));
  for (const url of ["http://0x7f.1/", "http://2130706433/", "http://[::ffff:127.0.0.1]/"]) {
    const check = await checkOutboundUrl(url, { policy: closed, resolve });
    assert.equal(!check.ok && check.kind, "blocked", url);
  }
});

Deno.test("a name that does not resolve and a non-HTTP URL are failures, not blocks", async () => {
  const resolve = table({});
  assert.deepEqual(await checkOutboundUrl("http://nowhere.example/", { policy: closed, resolve }), {
    ok: false,
    kind: "dns",
    reason: "DNS: ENOTFOUND",
  });
  const ftp = await checkOutboundUrl("ftp://x.example/", { policy: closed, resolve });
  assert.equal(!ftp.ok && ftp.kind, "invalid");
});

Deno.test("the system resolver reads /etc/hosts as any client would", async () => {
  const addresses = await systemResolver("localhost");
  assert.ok(addresses.some((a) => a === "127.0.0.1" || a === "::1"), addresses.join());
});

Deno.test("the webhook's outbound check is the probes' network policy", async () => {
  const resolve = (host: string) =>
    Promise.resolve(host === "hooks.example" ? ["93.184.216.34"] : ["169.254.169.254"]);
  const check = outboundCheck(createNetworkPolicy(), resolve);
  assert.deepEqual(await check(new URL("https://hooks.example/x")), { allowed: true });
  assert.deepEqual(await check(new URL("http://metadata.example/")), {
    allowed: false,
    reason: "blocked: 169.254.169.254 is link-local (not in PROBE_ALLOW_NETWORKS)",
  });
  assert.equal((await check(new URL("http://127.0.0.1:9/"))).allowed, false);
  const open = outboundCheck(createNetworkPolicy(parseNetworks("127.0.0.0/8")), resolve);
  assert.equal((await open(new URL("http://127.0.0.1:9/"))).allowed, true);
});

Deno.test("a name's lookup is shared within a second; its addresses are checked every time", async () => {
  const asked: string[] = [];
  const answers: Record<string, string[]> = { "inside.example": ["10.0.0.7"] };
  let clock = 0;
  const resolve = reusingResolver((host) => {
    asked.push(host);
    return table(answers)(host);
  }, { ttlMs: 1_000, now: () => clock });
  const open = createNetworkPolicy(["10.0.0.0/8"]);

  const [a, b] = await Promise.all([
    checkHost("inside.example", { policy: closed, resolve }),
    checkHost("Inside.Example", { policy: open, resolve }),
  ]);
  assert.deepEqual(asked, ["inside.example"]);
  // The reused answer is judged by each run's policy: refused under one, allowed under the other.
  assert.equal(a.ok, false);
  assert.equal(a.ok === false && a.kind, "blocked");
  assert.deepEqual(b, { ok: true, hostname: "Inside.Example", address: "10.0.0.7", family: 4 });

  // Within the second the name moves: the old answer is still the one used, and still checked.
  answers["inside.example"] = ["93.184.216.34"];
  clock = 999;
  const kept = await checkHost("inside.example", { policy: closed, resolve });
  assert.equal(kept.ok === false && kept.kind, "blocked");
  assert.equal(asked.length, 1);

  clock = 1_000;
  const moved = await checkHost("inside.example", { policy: closed, resolve });
  assert.equal(moved.ok && moved.address, "93.184.216.34");
  assert.equal(asked.length, 2);

  // A failed lookup is not kept: the next run asks again.
  const missing = await checkHost("gone.example", { policy: closed, resolve });
  assert.deepEqual(missing, { ok: false, kind: "dns", reason: "DNS: ENOTFOUND" });
  answers["gone.example"] = ["93.184.216.35"];
  const back = await checkHost("gone.example", { policy: closed, resolve });
  assert.equal(back.ok && back.address, "93.184.216.35");
  assert.deepEqual(asked.slice(2), ["gone.example", "gone.example"]);
});
