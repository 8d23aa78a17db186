import type { Db } from "../server/storage/database.ts";
import { json } from "../server/storage/json.ts";
import { probeIdOf } from "../server/domain/probe_id.ts";

/** The name of the i-th seeded project. */
export const projectAt = (i: number) => `bench-${String(i).padStart(4, "0")}`;
/** The URL of the j-th probe of every seeded project (already in normalised form). */
export const probeUrlAt = (j: number) => `https://target-${j}.example.com/health`;

/** Writes `projects` projects with `probes` probes each, in batches. */
export async function seed(
  db: Db,
  { projects, probes }: { projects: number; probes: number },
): Promise<void> {
  const batch = 100;
  for (let start = 0; start < projects; start += batch) {
    const names = Array.from(
      { length: Math.min(batch, projects - start) },
      (_, k) => projectAt(start + k),
    );
    await db.insertInto("projects")
      .values(names.map((name) => ({ name, label: `Project ${name}`, description: null })))
      .execute();
    await db.insertInto("probes")
      .values(names.flatMap((project) =>
        Array.from({ length: probes }, (_, j) => ({
          project,
          probe_id: probeIdOf("GET", probeUrlAt(j)),
          url: probeUrlAt(j),
          method: "GET",
          headers: json({ accept: "application/json" }),
          body: null,
          latency: 500,
        }))
      ))
      .execute();
  }
}
