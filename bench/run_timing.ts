/**
 * Timing a run made again and again (a probe's run, a query): after a warm-up, `runs` of them,
 * `concurrency` at a time; each one's time (p50, p99) and how many a second, as one line.
 *
 * @module
 */

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** Runs `once` `runs` times, `concurrency` at a time: "p50 0.36 ms, p99 15.02 ms, 1001 a second". */
export async function timeRuns(
  once: () => Promise<unknown>,
  { runs, concurrency = 1, warmUp = 50 }: { runs: number; concurrency?: number; warmUp?: number },
): Promise<string> {
  for (let i = 0; i < warmUp; i++) await once();
  const took: number[] = [];
  let next = 0;
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < runs) {
      const t = performance.now();
      await once();
      took.push(performance.now() - t);
    }
  }));
  const seconds = (performance.now() - began) / 1000;
  took.sort((a, b) => a - b);
  return `p50 ${quantile(took, 0.5).toFixed(2)} ms, p99 ${quantile(took, 0.99).toFixed(2)} ms, ${
    Math.round(runs / seconds)
  } a second`;
}
