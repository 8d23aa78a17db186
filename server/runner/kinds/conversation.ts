/**
 * What a connection-level kind (`tcp:`, `tls:`) says and hears once connected: the probe's
 * `body` sent as UTF-8, then, when `expect.body` asks, an answer read as text, bounded in bytes,
 * until the text settles the checks, the peer closes, or the run's time is up.
 *
 * @module
 */
import type { Duplex } from "node:stream";
import type { ProbeExpect } from "@probe/shared";
import { needsBody } from "../assertions.ts";

/** At most this many bytes of an answer are read; more is not waited for. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** What came of a conversation: text read (maybe none), or no answer and why. */
export type Heard =
  | { kind: "answer"; text: string | null }
  | { kind: "timeout" }
  | { kind: "failed"; code: string };

/**
 * Whether the text read so far settles the body checks (all `contains` found, or one
 * `not_contains` seen), looking only at what is new since the last call: an answer that comes a
 * byte at a time costs its length, not its length squared.
 */
function settler(expect: ProbeExpect | null): (text: string) => boolean {
  const wanted = new Set(expect?.body?.contains ?? []);
  const any = wanted.size > 0;
  const absent = expect?.body?.not_contains ?? [];
  let seen = 0;
  const found = (text: string, s: string) => text.indexOf(s, Math.max(0, seen - s.length + 1)) >= 0;
  return (text) => {
    let hit = false;
    for (const s of absent) hit ||= found(text, s);
    for (const s of wanted) if (found(text, s)) wanted.delete(s);
    seen = text.length;
    return hit || (any && wanted.size === 0);
  };
}

/** A node error's code, if it looks like one: never its message, which may quote the peer. */
export function errorCode(error: unknown): string {
  const raw = (error as { code?: unknown })?.code;
  return typeof raw === "string" && /^[A-Z][A-Z0-9_]{0,47}$/.test(raw) ? raw : "";
}

/**
 * Sends `body` (if any) on a connected socket and, when `expect` needs the answer's text, reads
 * it: at most `maxBytes`, until the checks are settled, the peer closes, or `signal` aborts.
 * Time running out after some text was read is an answer (what was read is judged); with
 * nothing read it is a timeout. The socket is left to the caller to destroy.
 */
export function converse(
  socket: Duplex,
  { body, expect, signal, maxBytes = MAX_ANSWER_BYTES }: {
    body: string | null;
    expect: ProbeExpect | null;
    signal: AbortSignal;
    maxBytes?: number;
  },
): Promise<Heard> {
  const listen = needsBody(expect);
  const settled = settler(expect);
  return new Promise<Heard>((resolve) => {
    let done = false;
    let text = "";
    let read = 0;
    const decoder = new TextDecoder();
    const finish = (heard: Heard) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      socket.removeListener("data", onData);
      socket.removeListener("end", onEnd);
      socket.removeListener("close", onEnd);
      socket.removeListener("error", onError);
      resolve(heard);
    };
    const answer = () => ({ kind: "answer" as const, text: text + decoder.decode() });
    const onAbort = () => finish(read > 0 ? answer() : { kind: "timeout" });
    const onData = (chunk: Uint8Array) => {
      const part = chunk.subarray(0, Math.max(0, maxBytes - read));
      read += part.byteLength;
      text += decoder.decode(part, { stream: true });
      if (read >= maxBytes || settled(text)) finish(answer());
    };
    const onEnd = () => finish(answer());
    // A failure once something was read leaves that to judge; before, it is the failure.
    const onError = (error: unknown) =>
      finish(read > 0 ? answer() : { kind: "failed", code: errorCode(error) });
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort);
    socket.on("error", onError);
    if (listen) {
      socket.on("data", onData);
      socket.on("end", onEnd);
      socket.on("close", onEnd);
    }
    if (body !== null && body !== "") {
      socket.write(new TextEncoder().encode(body), (error) => {
        if (error) onError(error);
        else if (!listen) finish({ kind: "answer", text: null });
      });
    } else if (!listen) {
      finish({ kind: "answer", text: null });
    }
  });
}
