/**
 * The loopback targets of one kind for `deno task bench:runner --mix`, in a process of their own
 * so that their CPU is counted apart from the runner's and the other kinds' targets:
 *
 *   TARGET_KIND=http|tcp|tls|dns TARGET_PORTS=250 deno run -A bench/kind_target.ts
 *
 * `http`: the tests' target server (`/p/<n>` answers 200); `tcp`: a listener that accepts and
 * closes; `tls`: a TLS server (`TLS_CERT`, `TLS_KEY`: PEM files) that completes the handshake
 * and closes; `dns`: the tests' DNS responder (`example.test` has A records). It listens on
 * `TARGET_PORTS` ports of 127.0.0.1 (a probe's URL is unique in its project: many probes of a
 * kind need many ports), prints `{"ports":[…]}` once it listens and, on SIGTERM,
 * `{"served":N}` (requests, connections accepted, handshakes completed, queries) before it exits.
 */
import net from "node:net";
import tls from "node:tls";
import { startDnsResponder } from "../server/testing/dns_responder.ts";
import { startTarget } from "../server/testing/target_server.ts";

const kind = Deno.env.get("TARGET_KIND");
const count = Number(Deno.env.get("TARGET_PORTS") ?? "1");

let served = 0;
const end = (socket: net.Socket) => {
  served++;
  socket.on("error", () => {});
  socket.end();
};

/** A server that counts each connection and ends it at once, listening on 127.0.0.1. */
async function closingServer(server: net.Server): Promise<number> {
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

/** Starts one listener; `served` tells what it served since it was last asked. */
type Listen = () => Promise<{ port: number; served: () => number }>;

const listeners: Record<string, Listen> = {
  async http() {
    const target = await startTarget({ countOnly: true });
    let told = 0;
    const served = () => {
      const total = [...target.counts.values()].reduce((a, b) => a + b, 0);
      const since = total - told;
      told = total;
      return since;
    };
    return { port: target.port, served };
  },
  async tcp() {
    return { port: await closingServer(net.createServer(end)), served: () => 0 };
  },
  async tls() {
    const cert = Deno.readTextFileSync(Deno.env.get("TLS_CERT")!);
    const key = Deno.readTextFileSync(Deno.env.get("TLS_KEY")!);
    return { port: await closingServer(tls.createServer({ cert, key }, end)), served: () => 0 };
  },
  async dns() {
    const responder = await startDnsResponder();
    return { port: responder.port, served: () => responder.queries.splice(0).length };
  },
};

const listen = kind === undefined ? undefined : listeners[kind];
if (!listen) {
  console.error(`kind_target.ts: TARGET_KIND is ${kind}, not http, tcp, tls or dns`);
  Deno.exit(2);
}
const started: Awaited<ReturnType<Listen>>[] = [];
for (let i = 0; i < count; i++) started.push(await listen());
// The DNS responders keep every query they received: emptied now and then, counted as they go.
setInterval(() => started.forEach((s) => served += s.served()), 1000);
Deno.addSignalListener("SIGTERM", () => {
  started.forEach((s) => served += s.served());
  console.log(JSON.stringify({ served }));
  Deno.exit(0);
});
console.log(JSON.stringify({ ports: started.map((s) => s.port) }));
