// @ts-check
/**
 * A probe's page: its state and definition, run now, edit, delete; latency (p50, p95, max) and
 * outcomes per bucket over 1, 6 or 24 hours, 7, 30 or 90 days (`…/series`), opening on the
 * smallest window that holds the probe's history; its recent results with
 * their errors and failed checks; its incidents.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { useCanWrite } from "./scope.js";
import { del, get, post, probePath, seg } from "./api.js";
import { useEvery, useLoad, useTitle } from "./load.js";
import { href, navigate } from "./routes.js";
import {
  At,
  ConfirmButton,
  describe,
  ErrorNote,
  FlappingBadge,
  Loading,
  OutcomeBadge,
  StateBadge,
  UrlText,
} from "./parts.js";
import {
  fitWindow,
  LatencyChart,
  latencySummary,
  OutcomeStrip,
  useFittedWindow,
  WINDOW_SECONDS,
} from "./charts.js";
import { IncidentTable } from "./incidents.js";
import { AssertionList } from "./assertions.js";
import { checkName } from "./check_words.js";
import { failureWords } from "./failure_words.js";
import { historySpan, millis, percent, plural } from "./format.js";
import { useNotice } from "./notice.js";
/** @import { ApiError } from "./api.js" */
/** @import { FailedCheck, Probe, ProbeResult, Series } from "./api_types.d.ts" */
import { ProbeLocations } from "./probe_locations.js";
import { useHeartbeatRedirect } from "./heartbeats.js";
import { kindOf } from "./kinds.js";
/** @import { Kind } from "./kinds.js" */

/** @param {string} text */
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** @type {[Series["window"], string][]} */
const WINDOWS = [
  ["1h", "hour"],
  ["6h", "6 hours"],
  ["24h", "24 hours"],
  ["7d", "7 days"],
  ["30d", "30 days"],
  ["90d", "90 days"],
];
/** @type {Record<number, string>} */
const BUCKET_NAMES = { 60: "minute", 300: "5 minutes", 3600: "hour", 86400: "day" };
const REFRESH_MS = 30_000;
const RESULTS_SHOWN = 50;
/** The newest incidents of the probe listed on its page. */
const INCIDENTS_SHOWN = 50;

/** @param {{ project: string, probeId: string, kind: Kind, onDone: () => void }} props */
function RunNow({ project, probeId, kind, onDone }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState(
    /** @type {{ ok: boolean, text: string } | null} */ (null),
  );
  const run = async () => {
    setBusy(true);
    setOutcome(null);
    try {
      const answer = await post(`${probePath(project, probeId)}/run`);
      const r = answer.data;
      setOutcome({
        ok: r.outcome === "up" || r.outcome === "degraded",
        text: `Ran now: ${r.outcome}${r.http_status ? ` (HTTP ${r.http_status})` : ""} in ${
          millis(r.duration_ms)
        }${r.error ? `: ${failureWords(r, kind)}` : ""}.`,
      });
      onDone();
    } catch (error) {
      setOutcome({
        ok: false,
        text: `Could not run it: ${describe(/** @type {ApiError} */ (error))}`,
      });
    } finally {
      setBusy(false);
    }
  };
  return view`
    <button type="button" class="primary" disabled=${busy} onClick=${run}>
          ${busy ? "Running…" : "Run now"}
        </button>
    <span role="status" class=${outcome && !outcome.ok ? "error" : ""}>${outcome?.text ?? ""}</span>
  `;
}

/**
 * @param {{ value: Series["window"], onChange: (window: Series["window"]) => void }} props
 */
function WindowChoice({ value, onChange }) {
  return view`<fieldset class="choices">
    <legend>Window</legend>
    ${
    WINDOWS.map(([w, label]) =>
      view`<label class="choice">
        <input type="radio" name="series-window" value=${w} checked=${value === w}
          onChange=${() => onChange(w)} />
        ${w === "1h" ? "1 hour" : label}
      </label>`
    )
  }
  </fieldset>`;
}

const KEYS = [
  ["up", "up"],
  ["degraded", "degraded"],
  ["down", "failed"],
  ["maintenance", "maintenance or blocked"],
  ["none", "no runs"],
];

/**
 * The window a probe page asks for first: the smallest that holds the oldest of its latest runs
 * (`results`, newest first). A full page may have older runs beyond it: the series' answer says
 * (`history_since`) and the chart moves to the window that holds them (`useFittedWindow`), so a
 * 15-minute-old probe with 90 runs still opens on the hour.
 * @param {ProbeResult[]} results
 * @returns {Series["window"]}
 */
export function firstWindow(results, now = Date.now()) {
  return fitWindow(results.at(-1)?.started_at, now);
}

/**
 * The window in a sentence: runs, uptime, bucket size, how percentiles were made.
 * @param {Series} series
 */
function seriesSummary(series) {
  let runs = 0;
  let ok = 0;
  for (const b of series.buckets) {
    runs += b.runs;
    ok += b.up + b.degraded;
  }
  const window = WINDOWS.find(([w]) => w === series.window)?.[1] ?? series.window;
  const bucket = BUCKET_NAMES[series.bucket_seconds] ?? `${series.bucket_seconds} s`;
  const span = historySpan(
    series.history_since,
    WINDOW_SECONDS[series.window],
    Date.parse(series.until),
  );
  return `${plural(runs, "run")} in the last ${window}${
    span ? ` (only ${span} of history: the probe is younger than the window)` : ""
  }; uptime ${percent(runs ? ok / runs : null)}; ` +
    `one bar per ${bucket}; percentiles ${series.percentiles}; times in UTC.`;
}

/**
 * @param {{ project: string, probeId: string, round: number, kind: Kind,
 *   initialWindow: Series["window"] }} props
 */
function SeriesView({ project, probeId, round, kind, initialWindow }) {
  const [answer, setAnswer] = useState(/** @type {Series | undefined} */ (undefined));
  const [window, setWindow] = useFittedWindow(initialWindow, answer);
  const { data, error, loading } = useLoad(
    () => get(`${probePath(project, probeId)}/series?window=${window}`),
    [project, probeId, window],
    round,
  );
  const series = data?.data;
  useEffect(() => setAnswer(series), [series]);
  return view`
    <section aria-labelledby="series-title" data-window=${window}>
      <h2 id="series-title">Latency and outcomes</h2>
      <${WindowChoice} value=${window} onChange=${setWindow} />
      <${ErrorNote} error=${error}>Could not load the series: <//>
        ${!series && loading && view`<${Loading} what="Loading the series" />`}
        ${
    series && view`
          <p class="muted" aria-live="polite">${seriesSummary(series)}</p>
          <figure class="figure">
            <${LatencyChart} series=${series} />
            <figcaption>${
      kind.name === "http" ? "Latency" : capital(kind.measures)
    } per bucket (p50, p95, max). ${latencySummary(series)}</figcaption>
          </figure>
          <figure class="figure">
            <${OutcomeStrip} series=${series} />
            <figcaption>Outcome per bucket: ${
      KEYS.map(([tone, name]) => view` <span class="key o-${tone}">${name}</span>`)
    }</figcaption>
          </figure>
        `
  }
      </section>
  `;
}

/**
 * A run's failed checks, folded under a summary (the run's error already names them): open to
 * read what was expected and seen. Folded, a phone's result card stays a few lines tall.
 * @param {FailedCheck[] | null} checks
 */
function failedChecks(checks) {
  if (!checks || checks.length === 0) return null;
  return view`<details class="checks-fold">
    <summary>${plural(checks.length, "failed check")}: what was expected and seen</summary>
    <ul class="checks">
    ${
    checks.map((c) =>
      view`<li>
        ${checkName(c.check)} (<code>${c.check}</code>): expected ${c.expected}${
        c.seen !== undefined ? view`, saw <code>${c.seen}</code>` : ""
      }
      </li>`
    )
  }
    </ul>
  </details>`;
}

/**
 * Two lists of results as one, newest first, each run once (a run is its start, trigger and
 * duration).
 * @param {ProbeResult[]} a
 * @param {ProbeResult[]} b
 */
export function mergeResults(a, b) {
  const byRun = new Map();
  for (const r of [...a, ...b]) {
    byRun.set(`${r.location}|${r.started_at}|${r.trigger}|${r.duration_ms}`, r);
  }
  return [...byRun.values()].sort((x, y) =>
    x.started_at < y.started_at ? 1 : x.started_at > y.started_at ? -1 : 0
  );
}

/** Results per page of the list; older pages beyond the first load come from the API. */
export const RESULTS_PAGE = 10;

/**
 * A run's error in words (as alerts say it), the error as recorded beside them when it differs.
 * @param {ProbeResult} r
 * @param {Kind} kind
 */
function runError(r, kind) {
  const words = failureWords(r, kind);
  return words === r.error ? view`${words}` : view`${words} <code>${r.error}</code>`;
}

/**
 * One result as a row of the table (a card on narrow screens); the HTTP status only for a kind
 * that has one.
 * @param {{ r: ProbeResult, kind: Kind }} props
 */
function ResultRow({ r, kind }) {
  const http = kind.name === "http";
  return view`
    <tr>
      <td data-label="Started">
        <${At} iso=${r.started_at} />
      </td>
      <td data-label="Location">${r.location}</td>
      <td data-label="Outcome"><${OutcomeBadge} outcome=${r.outcome} />${
    r.in_maintenance ? view` <span class="tag">maintenance</span>` : ""
  }</td>
      ${http && view`<td data-label="HTTP" class="num">${r.http_status ?? "—"}</td>`}
      <td data-label="Duration" class="num">${millis(r.duration_ms)}</td>
      <td data-label="Error or failed check" class="text-cell">${r.error ? runError(r, kind) : ""}${
    failedChecks(r.failed_checks)
  }${!r.error && !r.failed_checks?.length ? view`<span class="muted">—</span>` : ""}</td>
      <td data-label="Trigger">${r.trigger}</td>
    </tr>
  `;
}

/**
 * The probe's results, newest first, `RESULTS_PAGE` at a time: the first load's, then older
 * pages asked of the API (`before`) as the reader goes back. A phone shows ten cards, not fifty.
 * @param {{ project: string, probeId: string, kind: Kind,
 *   first: { data: ProbeResult[], meta: { next_before: string | null } } }} props
 */
function Results({ project, probeId, kind, first }) {
  // Every result seen: each refresh's first page merged in, so a run that slid off the first
  // page while older pages were open stays listed between them.
  const [held, setHeld] = useState(first.data);
  useEffect(() => setHeld((list) => mergeResults(first.data, list)), [first]);
  /** Where the next older page starts: undefined until one was asked for (the first load's). */
  const [nextBefore, setNextBefore] = useState(
    /** @type {string | null | undefined} */ (undefined),
  );
  const [page, setPage] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const top = useRef(/** @type {HTMLDivElement | null} */ (null));
  const all = held;
  const cursor = nextBefore === undefined ? first.meta?.next_before ?? null : nextBefore;
  const pages = Math.max(1, Math.ceil(all.length / RESULTS_PAGE));
  const shown = Math.min(page, pages - 1);
  const rows = all.slice(shown * RESULTS_PAGE, (shown + 1) * RESULTS_PAGE);
  if (all.length === 0) return view`<p class="muted">No runs yet.</p>`;
  /** @param {number} to */
  const go = (to) => {
    setPage(to);
    top.current?.scrollIntoView({ block: "start" });
  };
  const goOlder = async () => {
    if ((shown + 1) * RESULTS_PAGE < all.length) return go(shown + 1);
    if (cursor === null) return; // no older results: the button is disabled
    setBusy(true);
    setError(null);
    try {
      const answer = await get(
        `${probePath(project, probeId)}/results?limit=${RESULTS_SHOWN}&before=${seg(cursor)}`,
      );
      setHeld((list) => mergeResults(list, answer.data));
      setNextBefore(answer.meta.next_before);
      if (answer.data.length) go(shown + 1);
    } catch (e) {
      setError(/** @type {ApiError} */ (e));
    } finally {
      setBusy(false);
    }
  };
  const http = kind.name === "http";
  const from = shown * RESULTS_PAGE + 1;
  const hasOlder = (shown + 1) * RESULTS_PAGE < all.length || cursor !== null;
  return view`
    <div class="table-wrap" ref=${top}>
      <table class="grid">
        <caption class="sr-only">Recent results, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Location</th>
            <th scope="col">Outcome</th>
            ${http && view`<th scope="col" class="num">HTTP</th>`}
            <th scope="col" class="num">${http ? "Duration" : capital(kind.measures)}</th>
            <th scope="col">Error or failed check</th>
            <th scope="col">Trigger</th>
          </tr>
        </thead>
        <tbody>
          ${
    rows.map((r) =>
      view`<${ResultRow} key=${`${r.location}/${r.started_at}`} r=${r} kind=${kind} />`
    )
  }
        </tbody>
      </table>
    </div>
    <${ErrorNote} error=${error}>Could not load older results: <//>
    <nav class="pager" aria-label="Result pages">
      <button type="button" disabled=${shown === 0} onClick=${() => go(shown - 1)}>
        Newer results
      </button>
      <span aria-live="polite">Results ${from}–${from + rows.length - 1}, newest first</span>
      <button type="button" disabled=${!hasOlder || busy} onClick=${goOlder}>
        ${busy ? "Loading…" : "Older results"}
      </button>
    </nav>
  `;
}

/**
 * Where the probe runs, each location with its own state (the probe's state is decided from them
 * by the alert policy's location_quorum); a location with no recent result is marked so.
 * @param {Probe} probe
 */
function locationStates(probe) {
  if (probe.location_states.length === 0) return probe.effective_locations.join(", ");
  return probe.location_states.map((l, i) =>
    view`${i > 0 ? " · " : ""}${l.location}: ${l.state}${l.stale ? " (no recent result)" : ""}`
  );
}

/** @param {{ project: string, probeId: string }} props */
export function ProbePage({ project, probeId }) {
  const notice = useNotice();
  const canWrite = useCanWrite();
  const [round, setRound] = useState(0);
  const { data, error, loading, reload } = useLoad(
    () =>
      Promise.all([
        get(probePath(project, probeId)),
        get(`${probePath(project, probeId)}/results?limit=${RESULTS_SHOWN}`),
        // This probe's latest incidents, also those from before an edit gave it a new id.
        get(`/incidents?project=${seg(project)}&probe_id=${seg(probeId)}&limit=${INCIDENTS_SHOWN}`),
      ]),
    [project, probeId],
  );
  const refresh = () => {
    reload();
    setRound((n) => n + 1);
  };
  useEvery(REFRESH_MS, refresh);
  useHeartbeatRedirect(project, probeId, error);
  const probe = data?.[0].data;
  const kind = kindOf(probe?.url ?? "");
  useTitle(probe ? probe.label ?? probe.url : "Probe");
  const results = data?.[1].data ?? [];
  const resultsAnswer = data?.[1] ?? { data: [], meta: { next_before: null } };
  const incidents = data?.[2].data ?? [];
  const remove = async () => {
    await del(probePath(project, probeId));
    notice("The probe was deleted.");
    navigate(href.project(project));
  };
  return view`<div>
    <p class="crumbs">
      <a href=${href.overview()}>Overview</a> › <a href=${href.project(project)}>${project}</a>
    </p>
    <div class="page-head">
      <h1 tabindex="-1">${probe ? probe.label ?? probe.url : "Probe"}</h1>
      ${
    probe &&
    view`<${StateBadge} state=${probe.state} /><${FlappingBadge} flapping=${probe.flapping} />`
  }
    </div>
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the probe" />`}
    ${
    probe && view`
      <dl class="facts">
        ${
      kind.name === "http"
        ? view`<div>
          <dt>Request</dt>
          <dd><code>${probe.method} <${UrlText} url=${probe.url} /></code></dd>
        </div>`
        : view`<div>
          <dt>Watches</dt>
          <dd><span class="tag">${kind.tag}</span> <code><${UrlText} url=${probe.url} /></code></dd>
        </div>`
    }
        ${
      typeof probe.body === "string" && kind.name !== "http" && view`<div>
          <dt>Sends</dt>
          <dd><code>${probe.body}</code></dd>
        </div>`
    }
        <div>
          <dt>State</dt>
          <dd>${probe.state}${
      probe.state_since ? view` since <${At} iso=${probe.state_since} />` : ""
    }${probe.flapping ? ", flapping: alerts wait until it is stable" : ""}</dd>
        </div>
        <div>
          <dt>Depends on</dt>
          <dd>${probe.depends_on?.join(", ") ?? "nothing"}</dd>
        </div>
        <div>
          <dt>Locations</dt>
          <dd>${locationStates(probe)}${
      probe.locations === null ? " (the project's default)" : ""
    }</dd>
        </div>
        <div>
          <dt>Expected ${kind.name === "http" ? "latency" : kind.measures}</dt>
          <dd>${probe.latency ? millis(probe.latency) : "none"}</dd>
        </div>
        <div>
          <dt>Interval</dt>
          <dd>every ${probe.effective_interval_seconds} s${
      probe.interval_seconds === null ? " (the service's default)" : ""
    }</dd>
        </div>
        <div>
          <dt>Timeout</dt>
          <dd>${millis(probe.effective_timeout_ms)}${
      probe.timeout_ms === null ? " (the service's default)" : ""
    }</dd>
        </div>
        <div class="wide">
          <dt>Assertions</dt>
          <dd><${AssertionList} expect=${probe.expect} kind=${kind} /></dd>
        </div>
      </dl>
      ${
      canWrite && view`<div class="actions">
        <${RunNow} project=${project} probeId=${probeId} kind=${kind} onDone=${refresh} />
        <a class="button" href=${href.editProbe(project, probeId)}>Edit probe</a>
        <${ConfirmButton} label="Delete probe" confirmLabel="Delete probe"
          question="Delete this probe? Its results go too." onConfirm=${remove} />
      </div>`
    }
      <${SeriesView} project=${project} probeId=${probeId} round=${round} kind=${kind}
        initialWindow=${firstWindow(results)} />
      ${
      probe.effective_locations.length > 1 && view`<${ProbeLocations} project=${project}
        probeId=${probeId} locations=${probe.effective_locations} round=${round}
        initialWindow=${firstWindow(results)} />`
    }
      <section aria-labelledby="results-title">
        <h2 id="results-title">Recent results</h2>
        <${Results} project=${project} probeId=${probeId} kind=${kind}
          first=${resultsAnswer} />
      </section>
      <section aria-labelledby="incidents-title">
        <h2 id="incidents-title">Incidents</h2>
        <${IncidentTable} incidents=${incidents} onChanged=${refresh} />
      </section>
    `
  }
  </div>`;
}
