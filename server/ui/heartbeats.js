// @ts-check
/**
 * A project's heartbeats beside its probes (`GET /projects/{project}/heartbeats`), and how a
 * heartbeat's timing and deadline read in words.
 */
import { useEffect } from "preact/hooks";
import { view } from "./view.js";
import { get, seg } from "./api.js";
import { useLoad } from "./load.js";
import { href } from "./routes.js";
import { Ago, ErrorNote, Loading, StateBadge } from "./parts.js";
import { duration, millis } from "./format.js";
/** @import { Heartbeat } from "./api_types.d.ts" */

/** The URL scheme of a heartbeat's probe, as the overview and incidents name it. */
const HEARTBEAT_SCHEME = "heartbeat://";

/**
 * The heartbeat a probe URL stands for (`heartbeat://nightly` is `nightly`); null for a probe.
 * @param {string} url
 */
export const heartbeatOfUrl = (url) =>
  url.startsWith(HEARTBEAT_SCHEME) ? url.slice(HEARTBEAT_SCHEME.length) : null;

/**
 * Leads a probe page whose probe is not found to the heartbeat of that probe id, if the project
 * has one: incidents name a heartbeat by its probe's id, and link to a probe page. The address
 * is replaced, so Back does not come here again.
 * @param {string} project
 * @param {string} probeId
 * @param {{ status: number } | null} error the probe's load's
 */
export function useHeartbeatRedirect(project, probeId, error) {
  const missing = error?.status === 404;
  useEffect(() => {
    if (!missing) return;
    let current = true;
    get(`/projects/${seg(project)}/heartbeats`).then((answer) => {
      const beat = answer.data.find((h) => h.probe_id === probeId);
      if (current && beat) location.replace(href.heartbeat(project, beat.name));
    }, () => {});
    return () => {
      current = false;
    };
  }, [project, probeId, missing]);
}

/** The path of a heartbeat under the API. */
export const heartbeatPath = (
  /** @type {string} */ project,
  /** @type {string} */ name,
) => /** @type {`/projects/${string}/heartbeats/${string}`} */ (
  `/projects/${seg(project)}/heartbeats/${seg(name)}`
);

/**
 * A whole number of seconds in its largest whole unit: `1 h`, `90 s`, `2 d`; else as `duration`.
 * @param {number | null} seconds
 */
export function spanWords(seconds) {
  if (seconds === null) return duration(seconds);
  for (
    const [size, unit]
      of /** @type {[number, string][]} */ ([[86_400, "d"], [3600, "h"], [60, "min"]])
  ) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size} ${unit}`;
  }
  return duration(seconds);
}

/**
 * When the job is expected, in words: `every 1 h`, `30 2 * * * (Europe/Berlin)`; the grace after.
 * @param {Pick<Heartbeat, "period_seconds" | "schedule" | "timezone" | "grace_seconds">} h
 */
export function timingWords(h) {
  const when = h.schedule !== null
    ? `cron ${h.schedule} (${h.timezone ?? "UTC"})`
    : `every ${spanWords(h.period_seconds)}`;
  return `${when}, grace ${spanWords(h.grace_seconds)}`;
}

/**
 * The run-time rules in words: `a run takes 1 s to 45 min`, or null when only the grace bounds it.
 * @param {Pick<Heartbeat, "max_duration_seconds" | "min_duration_seconds" | "grace_seconds">} h
 */
export function runWords(h) {
  const most = h.max_duration_seconds ?? h.grace_seconds;
  const mostWords = `${spanWords(most)}${h.max_duration_seconds === null ? " (the grace)" : ""}`;
  if (h.min_duration_seconds) {
    return `from /start, at least ${spanWords(h.min_duration_seconds)} and at most ${mostWords}`;
  }
  return `from /start, at most ${mostWords}`;
}

/**
 * The next deadline relative to now: `in 4 min`, `passed 2 min ago`, or none pending.
 * @param {string | null} iso
 */
export function deadlineWords(iso, now = Date.now()) {
  if (!iso) return "none pending";
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  return seconds >= 0 ? `in ${duration(seconds)}` : `passed ${duration(-seconds)} ago`;
}

/** @param {{ project: string, heartbeats: Heartbeat[] }} props */
function HeartbeatTable({ project, heartbeats }) {
  return view`<div class="table-wrap">
    <table class="grid">
      <caption class="sr-only">Heartbeats of ${project}</caption>
      <thead>
        <tr>
          <th scope="col">State</th>
          <th scope="col">Heartbeat</th>
          <th scope="col">Expected</th>
          <th scope="col">Last ping</th>
          <th scope="col" class="num">Last run time</th>
          <th scope="col">Next deadline</th>
        </tr>
      </thead>
      <tbody>
        ${
    heartbeats.map((h) =>
      view`<tr key=${h.name}>
          <td data-label="State"><${StateBadge} state=${h.state} /></td>
          <td data-label="Heartbeat"><a href=${href.heartbeat(project, h.name)}>${h.name}</a></td>
          <td data-label="Expected">${timingWords(h)}</td>
          <td data-label="Last ping"><${Ago} iso=${h.last_ping_at} />${
        h.last_ping_kind && h.last_ping_kind !== "success"
          ? view` <span class="muted">(${h.last_ping_kind})</span>`
          : ""
      }</td>
          <td data-label="Last run time" class="num">${millis(h.last_duration_ms)}</td>
          <td data-label="Next deadline">${deadlineWords(h.next_deadline)}</td>
        </tr>`
    )
  }
      </tbody>
    </table>
  </div>`;
}

/**
 * The heartbeats section of a project's page, with **Add heartbeat** for a key that may write.
 * @param {{ project: string, canWrite: boolean, round: number }} props
 */
export function ProjectHeartbeats({ project, canWrite, round }) {
  const { data, error, loading } = useLoad(
    () => get(`/projects/${seg(project)}/heartbeats`),
    [project],
    round,
  );
  const heartbeats = data?.data ?? [];
  return view`<section aria-labelledby="heartbeats-title">
    <h2 id="heartbeats-title">Heartbeats${data ? ` (${heartbeats.length})` : ""}</h2>
    <p class="muted">Jobs that ping a URL when they run; silence past a deadline is an alert.</p>
    ${
    canWrite && view`<div class="actions">
      <a class="button" href=${href.newHeartbeat(project)}>Add heartbeat</a>
    </div>`
  }
    <${ErrorNote} error=${error}>Could not load the heartbeats: <//>
    ${!data && loading && view`<${Loading} what="Loading the heartbeats" />`}
    ${
    data && (heartbeats.length === 0
      ? view`<p class="muted">No heartbeats yet.</p>`
      : view`<${HeartbeatTable} project=${project} heartbeats=${heartbeats} />`)
  }
  </section>`;
}
