/**
 * The crash test's clients: concurrent project creates, probe creates and rewrites, and project
 * deletes, each recorded in the ledger by what its answer said (or that it got none).
 */
import type { Ledger, ProjectEntry } from "./ledger.ts";

/** A small seeded generator (mulberry32), so a failing round can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface WorkloadOptions {
  baseUrl: string;
  apiKey: string;
  ledger: Ledger;
  round: number;
  workers: number;
  random: () => number;
  /** Set when the server has been killed: workers finish the request at hand and stop. */
  stopped: () => boolean;
  /** Called on the first acknowledged write. */
  onFirstAck?: () => void;
}

export interface WorkloadCounts {
  acked: number;
  refused: number;
  lost: number;
}

type Outcome = { status: number } | { lost: true };

const URLS_PER_WORKER = 3;

/** Runs the workers until `stopped()`; resolves when all have stopped. */
export async function runWorkload(o: WorkloadOptions): Promise<WorkloadCounts> {
  const counts: WorkloadCounts = { acked: 0, refused: 0, lost: 0 };
  let sequence = 0;
  const headers = { "x-service-api-key": o.apiKey, "content-type": "application/json" };

  const send = async (method: string, path: string, body?: unknown): Promise<Outcome> => {
    try {
      const response = await fetch(`${o.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      await response.body?.cancel();
      if (response.status < 300) {
        if (counts.acked++ === 0) o.onFirstAck?.();
      } else counts.refused++;
      return { status: response.status };
    } catch {
      counts.lost++;
      return { lost: true };
    }
  };

  const pick = <T>(items: T[]): T | undefined =>
    items.length ? items[Math.floor(o.random() * items.length)] : undefined;

  const createProject = async (worker: number) => {
    const name = `r${o.round}-w${worker}-${sequence++}`;
    const entry: ProjectEntry = { name, fate: "maybe-created", probes: new Map() };
    o.ledger.projects.set(name, entry);
    const out = await send("POST", "/api/v1/projects", { project: name });
    if ("lost" in out) return;
    if (out.status === 201) entry.fate = "live";
    else throw new Error(`creating ${name} answered ${out.status}`);
  };

  const writeProbe = async (worker: number, project: ProjectEntry) => {
    // The URL names its writer: one writer per URL keeps its possible contents known.
    const url = `https://w${worker}.example.com/${Math.floor(o.random() * URLS_PER_WORKER)}`;
    const busy = project.probes.get(url);
    if (busy && busy.possible.size > 0) return;
    const entry = busy ?? { possible: new Set<number>() };
    project.probes.set(url, entry);
    const latency = 1 + (sequence++ % 599_999);
    entry.possible.add(latency);
    const out = await send("POST", `/api/v1/projects/${project.name}/probes`, { url, latency });
    if ("lost" in out) return;
    entry.possible.delete(latency);
    if (out.status === 200 || out.status === 201) entry.acked = latency;
    // 404: the project was deleted meanwhile; nothing was written.
    else if (out.status !== 404) throw new Error(`writing a probe answered ${out.status}`);
  };

  const deleteProject = async (project: ProjectEntry) => {
    project.fate = "deleting";
    const out = await send("DELETE", `/api/v1/projects/${project.name}`);
    if ("lost" in out) {
      project.fate = "maybe-deleted";
      return;
    }
    if (out.status === 200) project.fate = "deleted";
    else throw new Error(`deleting ${project.name} answered ${out.status}`);
  };

  const worker = async (id: number) => {
    while (!o.stopped()) {
      const roll = o.random();
      const usable = o.ledger.usable();
      // Probe writes also go to projects being deleted: that race is part of the test.
      const writable = [...o.ledger.projects.values()].filter((p) =>
        p.fate === "live" || p.fate === "deleting"
      );
      if (roll < 0.25 || usable.length < 3) await createProject(id);
      else if (roll < 0.9) await writeProbe(id, pick(writable)!);
      else await deleteProject(pick(usable)!);
    }
  };

  await Promise.all(Array.from({ length: o.workers }, (_, i) => worker(i)));
  return counts;
}
