/**
 * A DNS responder on loopback for tests of `dns://` probes: UDP and TCP on one port, built with
 * the wire format the runner uses (`dns-packet`). What it answers depends on the name asked:
 * `DNS_ZONE`'s records, and names that make it misbehave (`DNS_NAMES`).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import dgram from "node:dgram";
import net from "node:net";
// @ts-types="@types/dns-packet"
import * as packet from "dns-packet";

/** The records the responder holds, by lower-case name and type. */
export const DNS_ZONE: Readonly<Record<string, readonly packet.Answer[]>> = {
  "example.test": [
    { type: "A", name: "example.test", ttl: 60, data: "192.0.2.2" },
    { type: "A", name: "example.test", ttl: 60, data: "192.0.2.1" },
    { type: "AAAA", name: "example.test", ttl: 60, data: "2001:db8:0:0:0:0:0:1" },
    {
      type: "MX",
      name: "example.test",
      ttl: 60,
      data: { preference: 20, exchange: "Backup.example.test" },
    },
    {
      type: "MX",
      name: "example.test",
      ttl: 60,
      data: { preference: 10, exchange: "mail.example.test" },
    },
    { type: "TXT", name: "example.test", ttl: 60, data: ["v=spf1 ", "-all"] },
    { type: "NS", name: "example.test", ttl: 60, data: "ns1.example.test" },
    { type: "NS", name: "example.test", ttl: 60, data: "ns2.example.test" },
  ],
  "www.example.test": [
    { type: "CNAME", name: "www.example.test", ttl: 60, data: "example.test" },
  ],
  "truncated.example.test": [
    { type: "A", name: "truncated.example.test", ttl: 60, data: "192.0.2.53" },
  ],
  "stray.example.test": [
    { type: "A", name: "stray.example.test", ttl: 60, data: "192.0.2.7" },
  ],
};

/** Names that make the responder misbehave; any name neither here nor in the zone is NXDOMAIN. */
export const DNS_NAMES = {
  /** Answers SERVFAIL. */
  servfail: "servfail.example.test",
  /** Answers REFUSED. */
  refused: "refused.example.test",
  /** Over UDP a truncated answer (TC, no records); over TCP its records. */
  truncated: "truncated.example.test",
  /** Never answers, over UDP or TCP (a TCP connection is accepted and left open). */
  silent: "silent.example.test",
  /**
   * Over UDP, first an answer with another id, then one with the right id for another question,
   * then the real answer: a client must take only the last.
   */
  stray: "stray.example.test",
  /** Over UDP, a thousand answers with other ids and never the real one. */
  flood: "flood.example.test",
  /** Over UDP a truncated answer; over TCP the connection is held and never answered. */
  tcpSilent: "tcp-silent.example.test",
  /** Over UDP a truncated answer; over TCP a megabyte of bytes that are no DNS message. */
  tcpFlood: "tcp-flood.example.test",
} as const;

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** A query as the responder received it. */
export interface ReceivedQuery {
  transport: "udp" | "tcp";
  name: string;
  type: string;
}

export interface DnsResponder {
  /** 127.0.0.1. */
  readonly address: string;
  /** The port of both its UDP and TCP sides. */
  readonly port: number;
  /** Every query received, in order. */
  readonly queries: ReceivedQuery[];
  close(): Promise<void>;
}

function answerOf(
  query: packet.DecodedPacket,
  transport: "udp" | "tcp",
): { reply: packet.Packet | null; strays: packet.Packet[] } {
  const question = query.questions?.[0];
  const base = { type: "response" as const, id: query.id, questions: query.questions };
  if (!question) return { reply: { ...base, flags: 1 }, strays: [] };
  const name = question.name.toLowerCase();
  if (name === DNS_NAMES.silent || (name === DNS_NAMES.tcpSilent && transport === "tcp")) {
    return { reply: null, strays: [] };
  }
  if (name === DNS_NAMES.servfail) return { reply: { ...base, flags: RCODE.SERVFAIL }, strays: [] };
  if (name === DNS_NAMES.refused) return { reply: { ...base, flags: RCODE.REFUSED }, strays: [] };
  const truncates = [DNS_NAMES.truncated, DNS_NAMES.tcpSilent, DNS_NAMES.tcpFlood] as string[];
  if (truncates.includes(name) && transport === "udp") {
    return { reply: { ...base, flags: packet.TRUNCATED_RESPONSE }, strays: [] };
  }
  const otherId = ((query.id ?? 0) + 1) % 65536;
  const decoy: packet.Answer = { type: "A", name: question.name, ttl: 60, data: "203.0.113.66" };
  if (name === DNS_NAMES.flood && transport === "udp") {
    const strays = Array.from({ length: 1000 }, () => ({
      ...base,
      id: otherId,
      answers: [decoy],
    }));
    return { reply: null, strays };
  }
  const records = DNS_ZONE[name];
  if (!records) return { reply: { ...base, flags: RCODE.NXDOMAIN }, strays: [] };
  // A CNAME is answered whatever the type asked, followed by its target's records (a chain).
  const alias = records.find((r) => r.type === "CNAME");
  const target = alias?.type === "CNAME" ? DNS_ZONE[alias.data] ?? [] : [];
  const answers = [
    ...records.filter((r) => r.type === question.type || r.type === "CNAME"),
    ...(question.type === "CNAME" ? [] : target.filter((r) => r.type === question.type)),
  ];
  const strays = name === DNS_NAMES.stray && transport === "udp"
    ? [
      { ...base, id: otherId, answers: [decoy] },
      {
        ...base,
        questions: [{ ...question, name: "other.example.test" }],
        answers: [{ ...decoy, name: "other.example.test" }],
      },
    ]
    : [];
  return { reply: { ...base, flags: RCODE.NOERROR, answers }, strays };
}

function decodeQuery(bytes: Buffer): packet.DecodedPacket | null {
  try {
    const query = packet.decode(bytes);
    return query.type === "query" ? query : null;
  } catch {
    return null;
  }
}

function record(queries: ReceivedQuery[], query: packet.DecodedPacket, transport: "udp" | "tcp") {
  const q = query.questions?.[0];
  queries.push({ transport, name: q?.name ?? "", type: q?.type ?? "" });
}

function bindUdp(port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket("udp4");
    socket.once("error", reject);
    socket.bind(port, "127.0.0.1", () => {
      socket.off("error", reject);
      resolve(socket);
    });
  });
}

function listenTcp(server: net.Server, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const failed = () => resolve(false);
    server.once("error", failed);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", failed);
      resolve(true);
    });
  });
}

/** Starts a responder on 127.0.0.1, UDP and TCP on one free port. */
export async function startDnsResponder(): Promise<DnsResponder> {
  const queries: ReceivedQuery[] = [];
  const open = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => {});
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        const query = decodeQuery(buffered.subarray(2, 2 + length));
        buffered = buffered.subarray(2 + length);
        if (!query) continue;
        record(queries, query, "tcp");
        if (query.questions?.[0]?.name.toLowerCase() === DNS_NAMES.tcpFlood) {
          // A length of 65,535 and then far more than that, in 64 KiB writes.
          for (let i = 0; i < 16; i++) socket.write(Buffer.alloc(65_536, 0xff));
          continue;
        }
        const { reply } = answerOf(query, "tcp");
        if (reply) socket.write(packet.streamEncode(reply));
      }
    });
  });
  // The TCP side takes the UDP side's port; another process may hold it already, so a few tries.
  for (let attempt = 0;; attempt++) {
    const udp = await bindUdp(0);
    const port = udp.address().port;
    if (!(await listenTcp(tcp, port))) {
      await new Promise<void>((resolve) => udp.close(() => resolve()));
      if (attempt < 10) continue;
      throw new Error("no port free for both UDP and TCP");
    }
    udp.on("message", (bytes: Buffer, from: dgram.RemoteInfo) => {
      const query = decodeQuery(bytes);
      if (!query) return;
      record(queries, query, "udp");
      const { reply, strays } = answerOf(query, "udp");
      for (const stray of [...strays, ...(reply ? [reply] : [])]) {
        udp.send(packet.encode(stray), from.port, from.address);
      }
    });
    return {
      address: "127.0.0.1",
      port,
      queries,
      async close() {
        for (const socket of open) socket.destroy();
        await Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => tcp.close(() => resolve())),
        ]);
      },
    };
  }
}
