/**
 * Running one probe: what a run needs and gives, whatever its kind. The kind its URL's scheme
 * names (`kinds/`) makes the run and judges it.
 *
 * @module
 */
import { executorFor } from "./kinds/mod.ts";

export {
  type ExecuteOptions,
  type Outcome,
  OUTCOMES,
  type ProbeTarget,
  type RunResult,
} from "./kinds/kind.ts";
import type { ExecuteOptions, ProbeTarget, RunResult } from "./kinds/kind.ts";

/**
 * Runs a probe once, as its kind does (`kinds/`). Failures are values: an unreachable target, a
 * refusal by the network policy, a failed check; only a defect rejects.
 */
export function executeProbe(
  probe: ProbeTarget,
  options: ExecuteOptions,
): Promise<RunResult & Required<Pick<RunResult, "failedChecks">>> {
  return executorFor(probe.url).execute(probe, options);
}

export { requestOf, RETRY_PAUSE_MS, verdictOf } from "./kinds/http.ts";
