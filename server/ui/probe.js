/**
 * A probe's page: its state and definition, run now, edit, delete; latency (p50, p95, max) and
 * outcomes per bucket over 24 hours, 7, 30 or 90 days (`…/series`); its recent results with
 * their errors and failed checks; its incidents.
 */
import { useState } from "preact/hooks";
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
  Loading,
  OutcomeBadge,
  StateBadge,
} from "./parts.js";
import { LatencyChart, latencySummary, OutcomeStrip } from "./charts.js";
import { IncidentTable } from "./incidents.js";
import { millis, percent, plural } from "./format.js";
import { useNotice } from "./notice.js";

const WINDOWS = [["24h", "24 hours"], ["7d", "7 days"], ["30d", "30 days"], ["90d", "90 days"]];
const BUCKET_NAMES = { 300: "5 minutes", 3600: "hour", 86400: "day" };
const REFRESH_MS = 30_000;
const RESULTS_SHOWN = 50;
/** The newest incidents of the probe listed on its page. */
const INCIDENTS_SHOWN = 50;

function RunNow({ project, probeId, onDone }) {
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState(null);
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
        }${r.error ? `: ${r.error}` : ""}.`,
      });
      onDone();
    } catch (error) {
      setOutcome({ ok: false, text: `Could not run it: ${describe(error)}` });
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

function WindowChoice({ value, onChange }) {
  return view`<fieldset class="choices">
    <legend>Window</legend>
    ${
    WINDOWS.map(([w, label]) =>
      view`<label class="choice">
        <input type="radio" name="series-window" value=${w} checked=${value === w}
          onChange=${() => onChange(w)} />
        ${label}
      </label>`
    )
  }
  </fieldset>`;
}

const KEYS = [
  ["up", "up"],
  ["degraded", "degraded"],
  ["down", "failed"],
  ["maintenance", "maintenance"],
  ["none", "no runs"],
];

/** The window in a sentence: runs, uptime, bucket size, how percentiles were made. */
function seriesSummary(series) {
  let runs = 0;
  let ok = 0;
  for (const b of series.buckets) {
    runs += b.runs;
    ok += b.up + b.degraded;
  }
  const window = WINDOWS.find(([w]) => w === series.window)?.[1] ?? series.window;
  const bucket = BUCKET_NAMES[series.bucket_seconds] ?? `${series.bucket_seconds} s`;
  return `${plural(runs, "run")} in the last ${window}; uptime ${
    percent(runs ? ok / runs : null)
  }; ` +
    `one bar per ${bucket}; percentiles ${series.percentiles}; times in UTC.`;
}

function SeriesView({ project, probeId, round }) {
  const [window, setWindow] = useState("24h");
  const { data, error, loading } = useLoad(
    () => get(`${probePath(project, probeId)}/series?window=${window}`),
    [project, probeId, window],
    round,
  );
  const series = data?.data;
  return view`
    <section aria-labelledby="series-title">
      <h2 id="series-title">Latency and outcomes</h2>
      <${WindowChoice} value=${window} onChange=${setWindow} />
      <${ErrorNote} error=${error}>Could not load the series: <//>
        ${!series && loading && view`<${Loading} what="Loading the series" />`}
        ${
    series && view`
          <p class="muted" aria-live="polite">${seriesSummary(series)}</p>
          <figure class="figure">
            <${LatencyChart} series=${series} />
            <figcaption>Latency per bucket (p50, p95, max). ${latencySummary(series)}</figcaption>
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

function failedChecks(checks) {
  if (!checks || checks.length === 0) return null;
  return view`<ul class="checks">
    ${
    checks.map((c) =>
      view`<li>
        <code>${c.check}</code>: expected ${c.expected}${
        c.seen !== undefined ? view`, saw <code>${c.seen}</code>` : ""
      }
      </li>`
    )
  }
  </ul>`;
}

function Results({ results }) {
  if (results.length === 0) return view`<p class="muted">No runs yet.</p>`;
  return view`
    <div class="table-wrap">
      <table class="grid">
        <caption class="sr-only">Recent results, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Started</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="num">HTTP</th>
            <th scope="col" class="num">Duration</th>
            <th scope="col">Error or failed check</th>
            <th scope="col">Trigger</th>
          </tr>
        </thead>
        <tbody>
          ${
    results.map((r) =>
      view`
              <tr key=${r.started_at}>
                <td data-label="Started">
                  <${At} iso=${r.started_at} />
                </td>
                <td data-label="Outcome"><${OutcomeBadge} outcome=${r.outcome} />${
        r.in_maintenance ? view` <span class="tag">maintenance</span>` : ""
      }</td>
                <td data-label="HTTP" class="num">${r.http_status ?? "—"}</td>
                <td data-label="Duration" class="num">${millis(r.duration_ms)}</td>
                <td data-label="Error">${r.error ? view`<code>${r.error}</code>` : ""}${
        failedChecks(r.failed_checks)
      }${!r.error && !r.failed_checks?.length ? view`<span class="muted">—</span>` : ""}</td>
                <td data-label="Trigger">${r.trigger}</td>
              </tr>
            `
    )
  }
        </tbody>
      </table>
    </div>
  `;
}

/**
 * Where the probe runs, each location with its own state (the probe's state is decided from them
 * by the alert policy's location_quorum); a location with no recent result is marked so.
 */
function locationStates(probe) {
  if (probe.location_states.length === 0) return probe.effective_locations.join(", ");
  return probe.location_states.map((l, i) =>
    view`${i > 0 ? " · " : ""}${l.location}: ${l.state}${l.stale ? " (no recent result)" : ""}`
  );
}

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
  const probe = data?.[0].data;
  useTitle(probe ? probe.label ?? probe.url : "Probe");
  const results = data?.[1].data ?? [];
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
      ${probe && view`<${StateBadge} state=${probe.state} />`}
    </div>
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the probe" />`}
    ${
    probe && view`
      <dl class="facts">
        <div>
          <dt>Request</dt>
          <dd><code>${probe.method} ${probe.url}</code></dd>
        </div>
        <div>
          <dt>State</dt>
          <dd>${probe.state}${
      probe.state_since ? view` since <${At} iso=${probe.state_since} />` : ""
    }</dd>
        </div>
        <div>
          <dt>Locations</dt>
          <dd>${locationStates(probe)}</dd>
        </div>
        <div>
          <dt>Expected latency</dt>
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
        <div>
          <dt>Assertions</dt>
          <dd>${
      probe.expect ? view`<code>${JSON.stringify(probe.expect)}</code>` : "status below 400"
    }</dd>
        </div>
      </dl>
      ${
      canWrite && view`<div class="actions">
        <${RunNow} project=${project} probeId=${probeId} onDone=${refresh} />
        <a class="button" href=${href.editProbe(project, probeId)}>Edit probe</a>
        <${ConfirmButton} label="Delete probe" confirmLabel="Delete probe"
          question="Delete this probe? Its results go too." onConfirm=${remove} />
      </div>`
    }
      <${SeriesView} project=${project} probeId=${probeId} round=${round} />
      <section aria-labelledby="results-title">
        <h2 id="results-title">Recent results</h2>
        <${Results} results=${results} />
      </section>
      <section aria-labelledby="incidents-title">
        <h2 id="incidents-title">Incidents</h2>
        <${IncidentTable} incidents=${incidents} onChanged=${refresh} />
      </section>
    `
  }
  </div>`;
}
