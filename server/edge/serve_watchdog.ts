/**
 * The connection layer's accept watchdog (`serve.ts`): when the process runs out of file
 * descriptors, Deno's `node:net` listener stops accepting for good, without an error (Deno 2.9).
 * Each tick, the watchdog notices (no connection accepted, and a probe connection of its own not
 * accepted within `STALL_MS`, or refused for want of descriptors), lowers the cap
 * (`ConnectionTable.lowerCap`) and listens again; while accepting works the cap climbs back.
 *
 * @module
 */
import type http from "node:http";
import type { Socket } from "node:net";
import { errorFields } from "../base/log.ts";
import { type ConnectionTable, peerAddress } from "./serve_connections.ts";

/** How long the watchdog's probe may wait to be accepted before the listener is taken for dead. */
const STALL_MS = 2000;

/** A connection of the watchdog's own, to see whether the listener still accepts. */
interface Probe {
  conn?: Deno.Conn;
  localPort?: number;
  sentAt: number;
}

export interface AcceptWatchdog {
  /** Told of every accepted socket; true when it is the watchdog's own probe (closed here). */
  accepted(socket: Socket): boolean;
  /** One check: called every second or so. */
  tick(): Promise<void>;
  /** Closes the probe, if any (at shutdown). */
  endProbe(): void;
}

export function createAcceptWatchdog(
  { server, table, addr, listen }: {
    server: http.Server;
    table: ConnectionTable;
    addr: { hostname: string; port: number };
    listen: () => Promise<void>;
  },
): AcceptWatchdog {
  const probeHost = addr.hostname === "0.0.0.0"
    ? "127.0.0.1"
    : addr.hostname === "::"
    ? "::1"
    : addr.hostname;
  let acceptedSinceCheck = 0;
  let probe: Probe | null = null;
  let relistening = false;
  const isProbe = (socket: Socket, localPort: number) =>
    socket.remotePort === localPort && peerAddress(socket.remoteAddress) === peerAddress(probeHost);
  const endProbe = () => {
    try {
      probe?.conn?.close();
    } catch { /* closed already */ }
    probe = null;
  };
  const relisten = async () => {
    relistening = true;
    try {
      if (server.listening) server.close();
      await listen();
      table.counts.relistened++;
    } catch (error) {
      table.warn("listening again failed; retrying", errorFields(error));
    } finally {
      relistening = false;
    }
  };
  /** Connects a probe; one accepted before the connect resolved here is not kept. */
  const sendProbe = async () => {
    const sent: Probe = { sentAt: performance.now() };
    probe = sent;
    try {
      const conn = await Deno.connect({ hostname: probeHost, port: addr.port });
      if (probe !== sent || table.draining) {
        conn.close();
        return;
      }
      sent.conn = conn;
      sent.localPort = (conn.localAddr as Deno.NetAddr).port;
      for (const [socket, accepted] of table.conns) {
        if (isProbe(socket, sent.localPort)) {
          table.conns.delete(socket);
          table.waiting.delete(accepted);
          table.counts.accepted--;
          socket.destroy();
          break;
        }
      }
    } catch (error) {
      if (probe === sent) probe = null;
      if (isOutOfDescriptors(error)) {
        table.warn("out of file descriptors; lowering the connection cap", {
          open: table.conns.size,
        });
        table.lowerCap();
      }
    }
  };
  return {
    accepted(socket) {
      acceptedSinceCheck++; // the listener works, whoever this is
      if (probe?.localPort === undefined || !isProbe(socket, probe.localPort)) return false;
      socket.destroy();
      return true;
    },
    async tick() {
      if (table.draining || relistening) return;
      if (!server.listening) return await relisten();
      if (acceptedSinceCheck > 0) {
        acceptedSinceCheck = 0;
        endProbe();
        table.raiseCap();
        return;
      }
      if (probe && performance.now() - probe.sentAt >= STALL_MS) {
        endProbe();
        table.warn("the listener stopped accepting (out of file descriptors?); listening again", {
          open: table.conns.size,
        });
        table.lowerCap();
        return await relisten();
      }
      if (probe) return;
      await sendProbe();
    },
    endProbe,
  };
}

function isOutOfDescriptors(error: unknown): boolean {
  const text = String((error as { message?: unknown })?.message ?? error);
  return /os error 2[34]\b|EMFILE|ENFILE|Too many open files/i.test(text);
}
