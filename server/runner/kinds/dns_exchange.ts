/**
 * One DNS query and its answer, over UDP or TCP, to one address: the wire format is
 * `dns-packet`'s; what is accepted as the answer (its id and question) and how much is read are
 * decided here.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import dgram from "node:dgram";
import net from "node:net";
// @ts-types="@types/dns-packet"
import * as packet from "dns-packet";
import ipaddr from "ipaddr.js";

export type DnsAnswer = packet.DecodedPacket;

/** Where a query goes: an address the network policy passed, and a port. */
export interface Resolver {
  address: string;
  port: number;
  family: 4 | 6;
}

export interface DnsQuestion {
  name: string;
  type: packet.RecordType;
}

/** What came of one exchange; `aborted` when the run's signal ended it first. */
export type Exchange =
  | { kind: "answer"; answer: DnsAnswer }
  | { kind: "failed"; reason: string }
  | { kind: "aborted" };

/** The UDP payload size advertised (EDNS): what fits unfragmented on most paths. */
export const UDP_PAYLOAD_SIZE = 1232;
/** A DNS message over TCP is at most 65,535 bytes after its two-byte length. */
const MAX_TCP_MESSAGE = 65_535;

/** A query for one question, with a random id, recursion desired. */
export function encodeQuery(question: DnsQuestion): { id: number; query: packet.Packet } {
  const id = crypto.getRandomValues(new Uint16Array(1))[0];
  return {
    id,
    query: {
      type: "query",
      id,
      flags: packet.RECURSION_DESIRED,
      questions: [{ ...question, class: "IN" }],
      additionals: [{
        type: "OPT",
        name: ".",
        udpPayloadSize: UDP_PAYLOAD_SIZE,
        extendedRcode: 0,
        ednsVersion: 0,
        flags: 0,
        flag_do: false,
        options: [],
      }],
    },
  };
}

/** Whether a message answers our query: a response with its id and its one question. */
function answers(message: DnsAnswer, id: number, question: DnsQuestion): boolean {
  const asked = message.questions ?? [];
  return message.type === "response" && message.id === id && asked.length === 1 &&
    asked[0].name.toLowerCase() === question.name && asked[0].type === question.type &&
    (asked[0].class ?? "IN") === "IN";
}

function decode(bytes: Buffer): DnsAnswer | null {
  try {
    return packet.decode(bytes);
  } catch {
    return null;
  }
}

const SOCKET_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
};

/** A socket error in words: a fixed phrase by its code, never its message. */
function unreachable(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const words = typeof code === "string" ? SOCKET_ERRORS[code] : undefined;
  return `resolver unreachable (${words ?? "network error"})`;
}

/** The same address, whatever its text form. */
function sameAddress(a: string, b: string): boolean {
  try {
    return ipaddr.process(a).toString() === ipaddr.process(b).toString();
  } catch {
    return false;
  }
}

/** How one transport sends a query and hands on what comes of it; answers the clean-up. */
type Transport = (
  to: Resolver,
  query: packet.Packet,
  isAnswer: (message: DnsAnswer) => boolean,
  settle: (result: Exchange) => void,
) => () => void;

/**
 * UDP: datagrams from elsewhere, that do not parse, or that answer another id or question are
 * dropped (a spoofer must guess the random id); the first that answers is taken.
 */
const udp: Transport = (to, query, isAnswer, settle) => {
  const socket = dgram.createSocket(to.family === 6 ? "udp6" : "udp4");
  socket.on("error", (error) => settle({ kind: "failed", reason: unreachable(error) }));
  socket.on("message", (message: Buffer, from: dgram.RemoteInfo) => {
    if (from.port !== to.port || !sameAddress(from.address, to.address)) return;
    const answer = decode(message);
    if (answer && isAnswer(answer)) settle({ kind: "answer", answer });
  });
  socket.send(packet.encode(query), to.port, to.address, (error) => {
    if (error) settle({ kind: "failed", reason: unreachable(error) });
  });
  return () => socket.close();
};

/** TCP: one connection, one message of at most 65,535 bytes read, then closed. */
const tcp: Transport = (to, query, isAnswer, settle) => {
  const socket = net.connect({ host: to.address, port: to.port, family: to.family });
  let read = Buffer.alloc(0);
  socket.on("connect", () => socket.write(packet.streamEncode(query)));
  socket.on("error", (error) => settle({ kind: "failed", reason: unreachable(error) }));
  socket.on("close", () => {
    settle({ kind: "failed", reason: "the resolver closed the connection without an answer" });
  });
  socket.on("data", (chunk: Buffer) => {
    // Never more than one message is kept: a length and at most 65,535 bytes.
    read = Buffer.concat([read, chunk]).subarray(0, 2 + MAX_TCP_MESSAGE);
    if (read.length < 2 || read.length < 2 + read.readUInt16BE(0)) return;
    const answer = decode(read.subarray(2, 2 + read.readUInt16BE(0)));
    settle(
      answer && isAnswer(answer)
        ? { kind: "answer", answer }
        : { kind: "failed", reason: "the resolver's answer does not answer the query" },
    );
  });
  return () => socket.destroy();
};

/**
 * One query over `transport` ("tcp" after a truncated UDP answer): the first answer to it, a
 * failure in words, or `aborted` once `signal` ends it; its socket is closed in every case.
 */
export function query(
  transport: "udp" | "tcp",
  to: Resolver,
  question: DnsQuestion,
  signal: AbortSignal,
): Promise<Exchange> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve({ kind: "aborted" });
    let close = () => {};
    let settled = false;
    const settle = (result: Exchange) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      close();
      resolve(result);
    };
    const onAbort = () => settle({ kind: "aborted" });
    signal.addEventListener("abort", onAbort, { once: true });
    const { id, query } = encodeQuery(question);
    close = (transport === "udp" ? udp : tcp)(to, query, (m) => answers(m, id, question), settle);
  });
}
