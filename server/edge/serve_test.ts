import assert from "node:assert/strict";
import { LINGER_MS } from "./serve_exchange.ts";
import {
  type ConnectionLimits,
  countFreeFileDescriptors,
  type HttpServer,
  MAX_SIZED_CONNECTIONS,
  PortInUseError,
  RequestBodyError,
  serve,
  type ServeHandler,
  sizeMaxConnections,
} from "./serve.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Serves `handler` on 127.0.0.1, a port of its own, for the length of `fn`. */
async function withServer(
  handler: ServeHandler,
  limits: Partial<ConnectionLimits>,
  fn: (server: HttpServer, url: string) => Promise<void>,
): Promise<void> {
  const server = await serve({ hostname: "127.0.0.1", port: 0, handler, limits });
  try {
    await fn(server, `http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

const hello: ServeHandler = () => new Response("hello");

/** A raw connection to the server. */
async function connect(server: HttpServer): Promise<Deno.TcpConn> {
  return await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
}

/** Reads until the server closes the connection (or `ms` passes); what arrived, and when. */
async function readUntilClosed(
  conn: Deno.Conn,
  ms: number,
): Promise<{ text: string; closed: boolean; afterMs: number }> {
  const started = performance.now();
  const buffer = new Uint8Array(65536);
  let text = "";
  const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), ms));
  try {
    for (;;) {
      const n = await Promise.race([conn.read(buffer), timeout]);
      if (n === "timeout") return { text, closed: false, afterMs: performance.now() - started };
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n));
    }
  } catch { /* reset: closed too */ }
  return { text, closed: true, afterMs: performance.now() - started };
}

const closeQuietly = (conn: Deno.Conn) => {
  try {
    conn.close();
  } catch { /* closed already */ }
};

/** Polls until `check` holds, for at most `ms`. */
async function eventually(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("requests reach the handler as Request objects with the peer's address", async () => {
  const seen: { method: string; path: string; body: string; address: string }[] = [];
  await withServer(
    async (request, client) => {
      seen.push({
        method: request.method,
        path: new URL(request.url).pathname + new URL(request.url).search,
        body: request.body ? await request.text() : "",
        address: client.address,
      });
      return new Response(JSON.stringify({ ok: true }), {
        status: 201,
        headers: { "content-type": "application/json", "x-extra": "1" },
      });
    },
    {},
    async (_server, url) => {
      const res = await fetch(`${url}/a/b?c=d`, { method: "POST", body: '{"x":1}' });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("x-extra"), "1");
      assert.equal(res.headers.get("content-length"), "11");
      assert.deepEqual(await res.json(), { ok: true });
      const head = await fetch(`${url}/h`, { method: "HEAD" });
      assert.equal(head.status, 201);
      assert.equal(await head.text(), "");
    },
  );
  assert.deepEqual(seen, [
    { method: "POST", path: "/a/b?c=d", body: '{"x":1}', address: "127.0.0.1" },
    { method: "HEAD", path: "/h", body: "", address: "127.0.0.1" },
  ]);
});

Deno.test("a streamed answer (Transfer-Encoding: chunked) goes out chunk by chunk", async () => {
  await withServer(
    () => {
      let n = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (n++ < 3) controller.enqueue(encoder.encode(`line ${n}\n`));
          else controller.close();
        },
      });
      return new Response(body, { headers: { "transfer-encoding": "chunked" } });
    },
    {},
    async (_server, url) => {
      const res = await fetch(url);
      assert.equal(res.headers.get("content-length"), null);
      assert.equal(await res.text(), "line 1\nline 2\nline 3\n");
    },
  );
});

Deno.test("a handler that throws answers 500; a bad Host header is not trusted", async () => {
  await withServer(
    (request) => {
      if (new URL(request.url).pathname === "/boom") throw new Error("boom");
      return new Response(new URL(request.url).host);
    },
    {},
    async (server, url) => {
      const res = await fetch(`${url}/boom`);
      assert.equal(res.status, 500);
      assert.equal((await res.json()).error.code, "internal");
      const conn = await connect(server);
      await conn.write(
        encoder.encode("GET /x HTTP/1.1\r\nHost: evil/../y\r\nConnection: close\r\n\r\n"),
      );
      const { text } = await readUntilClosed(conn, 2000);
      closeQuietly(conn);
      assert.match(text, /^HTTP\/1.1 200/);
      assert.ok(text.endsWith(`127.0.0.1:${server.addr.port}`), text);
    },
  );
});

Deno.test("what a Request cannot hold is answered 400; a bodiless request's headers read as sent", async () => {
  await withServer(
    (request) => {
      const headers: string[] = [];
      request.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
      return new Response(
        JSON.stringify({ method: request.method, x: request.headers.get("X-A"), headers }),
      );
    },
    {},
    async (server) => {
      const send = async (head: string) => {
        const conn = await connect(server);
        await conn.write(Uint8Array.from(head, (c) => c.charCodeAt(0)));
        const { text } = await readUntilClosed(conn, 2000);
        closeQuietly(conn);
        return {
          status: Number(text.slice(9, 12)),
          body: text.slice(text.indexOf("\r\n\r\n") + 4),
        };
      };
      for (
        const refused of [
          "TRACE / HTTP/1.1\r\nHost: a\r\n", // a method Request refuses
          "GET / HTTP/1.1\r\nHost: a:99999\r\n", // a URL that does not parse
          "DELETE http://a:99999/ HTTP/1.1\r\nHost: a\r\n",
        ]
      ) {
        const { status, body } = await send(`${refused}Connection: close\r\n\r\n`);
        assert.equal(status, 400, refused);
        assert.equal(JSON.parse(body).error.code, "bad_request");
      }
      for (const method of ["GET", "DELETE", "OPTIONS", "PROPFIND"]) {
        const { status, body } = await send(
          `${method} / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nx-a: caf\xe9\r\nB:  pad \r\nConnection: close\r\n\r\n`,
        );
        assert.equal(status, 200, method);
        assert.deepEqual(JSON.parse(body), {
          method,
          x: "1, caf\xe9",
          headers: ["b: pad", "connection: close", "host: a", "x-a: 1, caf\xe9"],
        });
      }
    },
  );
});
Deno.test("a connection that sends nothing is closed after the idle timeout", async () => {
  await withServer(hello, { idleTimeoutMs: 150, headersTimeoutMs: 1000 }, async (server) => {
    const conn = await connect(server);
    const { closed, afterMs } = await readUntilClosed(conn, 2000);
    closeQuietly(conn);
    assert.ok(closed);
    assert.ok(afterMs >= 100 && afterMs < 1000, `closed after ${afterMs} ms`);
    assert.equal(server.stats().idleClosed, 1);
  });
});

Deno.test("a kept-alive connection is closed after the idle timeout once answered", async () => {
  await withServer(hello, { idleTimeoutMs: 200, headersTimeoutMs: 1000 }, async (server) => {
    const conn = await connect(server);
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    const { text, closed, afterMs } = await readUntilClosed(conn, 2000);
    closeQuietly(conn);
    assert.match(text, /^HTTP\/1.1 200[^]*hello$/);
    assert.ok(closed && afterMs >= 150, `closed after ${afterMs} ms`);
  });
});

Deno.test("a request that arrived while the server was stalled is answered, not closed as idle", async () => {
  await withServer(hello, { idleTimeoutMs: 200, headersTimeoutMs: 1000 }, async (server) => {
    const conn = await connect(server);
    await eventually(() => server.stats().accepted > 0);
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    // The server's loop stalls past the idle timeout with the request unread in its socket.
    const until = performance.now() + 400;
    while (performance.now() < until) { /* busy */ }
    const { text } = await readUntilClosed(conn, 2000);
    closeQuietly(conn);
    assert.match(text, /^HTTP\/1.1 200[^]*hello$/);
    assert.equal(server.stats().idleClosed, 1, "closed as idle once answered");
  });
});

Deno.test("a request head that never completes is closed after the header timeout", async () => {
  await withServer(hello, { idleTimeoutMs: 100, headersTimeoutMs: 400 }, async (server) => {
    const conn = await connect(server);
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: a\r\n"));
    // A byte every 50 ms: never idle, never done.
    const drip = setInterval(() => conn.write(encoder.encode("X")).catch(() => {}), 50);
    const { text, closed, afterMs } = await readUntilClosed(conn, 3000);
    clearInterval(drip);
    closeQuietly(conn);
    assert.equal(text, "");
    assert.ok(closed && afterMs >= 300 && afterMs < 1500, `closed after ${afterMs} ms`);
    assert.equal(server.stats().headersTimedOut, 1);
  });
});

Deno.test("a body that stops mid-way errors the request's stream and closes the connection", async () => {
  const errors: unknown[] = [];
  await withServer(
    async (request) => {
      try {
        await request.text();
      } catch (error) {
        errors.push(error);
      }
      return new Response("read");
    },
    { bodyTimeoutMs: 300 },
    async (server) => {
      const conn = await connect(server);
      await conn.write(encoder.encode(
        "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
      ));
      const { closed, afterMs } = await readUntilClosed(conn, 3000);
      closeQuietly(conn);
      assert.ok(closed && afterMs >= 200 && afterMs < 1500, `closed after ${afterMs} ms`);
      await eventually(() => errors.length === 1);
      assert.ok(errors[0] instanceof RequestBodyError);
      assert.equal((errors[0] as RequestBodyError).reason, "timeout");
      assert.equal(server.stats().bodyTimedOut, 1);
    },
  );
});

Deno.test("an answer given before the body is read, whose rest does not come, ends the connection", async () => {
  await withServer(() => new Response("no", { status: 401 }), {}, async (server) => {
    const conn = await connect(server);
    await conn.write(encoder.encode(
      "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n" + "x".repeat(1000),
    ));
    // The rest is waited for a moment (LINGER_MS), then the answer ends the connection.
    const { text, closed, afterMs } = await readUntilClosed(conn, 3000 + LINGER_MS);
    closeQuietly(conn);
    assert.match(text, /^HTTP\/1.1 401/);
    assert.match(text, /connection: close/i);
    assert.ok(closed && afterMs >= LINGER_MS * 0.9, `closed after ${afterMs} ms`);
  });
});

Deno.test("the rest of a body is waited for only within the body's deadline", async () => {
  await withServer(
    () => new Response("no", { status: 401 }),
    { bodyTimeoutMs: 300 },
    async (server) => {
      const conn = await connect(server);
      await conn.write(
        encoder.encode("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\nx"),
      );
      const { text, closed, afterMs } = await readUntilClosed(conn, 3000);
      closeQuietly(conn);
      assert.match(text, /^HTTP\/1.1 401[^]*connection: close/i);
      assert.ok(closed && afterMs < LINGER_MS, `closed after ${afterMs} ms`);
    },
  );
});

Deno.test("an answer given while the body is still arriving lets the upload end, not reset", async () => {
  // Refused on its headers, as a body over the limit is: the client is still sending.
  await withServer(() => new Response("too large", { status: 413 }), {}, async (server) => {
    const conn = await connect(server);
    const size = 2 * 1024 * 1024;
    await conn.write(
      encoder.encode(`POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${size}\r\n\r\n`),
    );
    const chunk = new Uint8Array(64 * 1024).fill(120);
    for (let sent = 0; sent < size; sent += chunk.length) {
      await conn.write(chunk); // a reset would fail a write
      if (sent % (512 * 1024) === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));
    const { text, closed } = await readUntilClosed(conn, 5000);
    closeQuietly(conn);
    // Both answers on the one connection: the rest of the refused body was read and dropped.
    assert.match(text, /^HTTP\/1.1 413[^]*too large/);
    assert.doesNotMatch(text.split("too large")[0], /connection: close/i);
    assert.equal(text.match(/HTTP\/1.1 413/g)?.length, 2);
    assert.ok(closed);
  });
});

Deno.test("at the cap a new connection closes the one that has waited longest", async () => {
  await withServer(hello, { maxConnections: 3 }, async (server, url) => {
    const idle = [await connect(server), await connect(server), await connect(server)];
    await eventually(() => server.stats().open === 3);
    const res = await fetch(`${url}/healthz`);
    assert.equal(await res.text(), "hello");
    const first = await readUntilClosed(idle[0], 1000);
    assert.ok(first.closed, "the oldest idle connection was closed");
    assert.equal(server.stats().evicted, 1);
    assert.ok(server.stats().open <= 3);
    idle.forEach(closeQuietly);
  });
});

Deno.test("at the cap with every connection busy, the new connection is closed", async () => {
  const release = Promise.withResolvers<void>();
  await withServer(
    async () => {
      await release.promise;
      return new Response("done");
    },
    { maxConnections: 1 },
    async (server, url) => {
      const busy = fetch(url);
      await eventually(() => server.stats().waiting === 0 && server.stats().open === 1);
      const extra = await connect(server);
      const { closed } = await readUntilClosed(extra, 1000);
      closeQuietly(extra);
      assert.ok(closed);
      assert.equal(server.stats().refused, 1);
      release.resolve();
      assert.equal(await (await busy).text(), "done");
    },
  );
});

Deno.test("shutdown lets a request in progress finish, refuses new ones, then resolves", async () => {
  const started = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const server = await serve({
    hostname: "127.0.0.1",
    port: 0,
    handler: async () => {
      started.resolve();
      await release.promise;
      return new Response("finished");
    },
  });
  const url = `http://127.0.0.1:${server.addr.port}`;
  const idle = await connect(server);
  const inFlight = fetch(url);
  await started.promise;
  const stopped = server.shutdown();
  assert.ok((await readUntilClosed(idle, 1000)).closed, "idle connections close at once");
  closeQuietly(idle);
  await assert.rejects(Deno.connect({ hostname: "127.0.0.1", port: server.addr.port }));
  release.resolve();
  const res = await inFlight;
  assert.equal(res.headers.get("connection"), "close");
  assert.equal(await res.text(), "finished");
  await stopped;
  await server.finished;
});

Deno.test("a port in use is a PortInUseError", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    await assert.rejects(
      serve({ hostname: "127.0.0.1", port: taken.addr.port, handler: hello }),
      (error: unknown) => error instanceof PortInUseError && error.port === taken.addr.port,
    );
  } finally {
    taken.close();
  }
});

Deno.test("the default cap is the free descriptors less what the rest of the process needs", () => {
  assert.equal(sizeMaxConnections(5_000, 274), 4_726);
  assert.equal(sizeMaxConnections(200, 274), 16);
  assert.equal(sizeMaxConnections(1_000_000, 274), MAX_SIZED_CONNECTIONS);
  let open = 0;
  const limited = () => {
    if (open >= 37) throw new Error("Too many open files (os error 24)");
    open++;
    return { close: () => open-- };
  };
  assert.equal(countFreeFileDescriptors(100, limited), 37);
  assert.equal(open, 0, "every file is closed again");
  assert.equal(countFreeFileDescriptors(20, limited), 20);
  assert.equal(
    countFreeFileDescriptors(10, () => {
      throw new Error("no /dev/null");
    }),
    undefined,
  );
  assert.equal(countFreeFileDescriptors(20), 20);
});

Deno.test("a client that goes away before or during the answer harms nothing", async () => {
  await withServer(
    async (request) => {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (new URL(request.url).pathname === "/stream") {
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            await new Promise((resolve) => setTimeout(resolve, 10));
            controller.enqueue(encoder.encode("x".repeat(65536)));
          },
        });
        return new Response(body, { headers: { "transfer-encoding": "chunked" } });
      }
      return new Response("late");
    },
    {},
    async (server, url) => {
      for (const path of ["/", "/stream"]) {
        const conn = await connect(server);
        await conn.write(encoder.encode(`GET ${path} HTTP/1.1\r\nHost: a\r\n\r\n`));
        if (path === "/stream") await conn.read(new Uint8Array(1024));
        conn.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(await (await fetch(url)).text(), "late");
      await eventually(() => server.stats().open <= 1);
    },
  );
});
