/**
 * The runner's half of a kind of probe: how one run is made and judged. The interface's half (the
 * URL form, which fields and checks the kind takes) is `shared/kinds/`.
 *
 * @module
 */
import type { ExecuteOptions, ProbeTarget, RunResult } from "../execute.ts";

export interface KindExecutor {
  /** The URL schemes it runs, with their colon: those of its `KindRules`. */
  readonly schemes: readonly string[];
  /**
   * One run: connects only where `options.policy` allows (an address refused is a `blocked`
   * outcome), within the probe's timeout (`probe.timeoutMs`, else `options.timeoutMs`). What the
   * target does is a value (`down` with an `error` in words and `failedChecks`); only a defect
   * rejects. `durationMs` is the kind's latency figure, judged against `probe.latency`.
   */
  execute(
    probe: ProbeTarget,
    options: ExecuteOptions,
  ): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>>;
}
