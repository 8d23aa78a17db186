// @ts-check
/**
 * A heartbeat's page: its state, last ping, last run time and next deadline; the ping URL with
 * Copy (masked for a read-only key, as the API answers it); its kept pings with their bodies; a
 * chart of its run times; its incidents; and snippets for curl, cron, systemd and Kubernetes.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { useCanWrite } from "./scope.js";
import { del, get, seg } from "./api.js";
import { useEvery, useLoad, useTitle } from "./load.js";
import { href, navigate } from "./routes.js";
import { Ago, At, ConfirmButton, ErrorNote, Loading, StateBadge } from "./parts.js";
import { IncidentTable } from "./incidents.js";
import { CopyBox } from "./settings_parts.js";
import { count, millis, plural } from "./format.js";
import { useNotice } from "./notice.js";
import { deadlineWords, heartbeatPath, runWords, timingWords } from "./heartbeats.js";
import { snippets } from "./heartbeat_snippets.js";
import { runsOf, runsSummary, RunTimeChart } from "./heartbeat_runs.js";
/** @import { Heartbeat, HeartbeatPing } from "./api_types.d.ts" */

const REFRESH_MS = 15_000;
/** The newest incidents of the heartbeat listed on its page. */
const INCIDENTS_SHOWN = 50;
/** How much of a ping's body the table shows before "more"; the API keeps 10 KiB. */
const BODY_SHOWN = 2000;

/** A ping's kind in words: `success`, `exit code 3`. */
const kindWords = (/** @type {HeartbeatPing} */ p) =>
  p.kind === "exit" ? `exit code ${p.exit_code}` : p.kind;

/** Whether a ping is bad news. */
const failing = (/** @type {HeartbeatPing} */ p) =>
  p.kind === "fail" || (p.kind === "exit" && p.exit_code !== 0);

/**
 * A ping's body: text only (never markup), cut to `BODY_SHOWN` characters, its size beside it.
 * @param {{ ping: HeartbeatPing }} props
 */
function PingBody({ ping }) {
  if (ping.body === null) return view`<span class="muted">—</span>`;
  const cut = ping.body.length > BODY_SHOWN;
  const kept = ping.body_bytes > ping.body.length ? " (the first 10 KiB are kept)" : "";
  return view`<details class="ping-body">
    <summary>${plural(ping.body_bytes, "byte")}${kept}</summary>
    <pre>${cut ? `${ping.body.slice(0, BODY_SHOWN)}…` : ping.body}</pre>
  </details>`;
}

/** @param {{ pings: HeartbeatPing[] }} props */
function PingTable({ pings }) {
  if (pings.length === 0) {
    return view`<p class="muted">No pings yet: the job has not called its URL.</p>`;
  }
  return view`<div class="table-wrap">
    <table class="grid">
      <caption class="sr-only">Latest pings, newest first</caption>
      <thead>
        <tr>
          <th scope="col" class="num">#</th>
          <th scope="col">When</th>
          <th scope="col">Kind</th>
          <th scope="col">Method</th>
          <th scope="col">From</th>
          <th scope="col">Body</th>
        </tr>
      </thead>
      <tbody>
        ${
    pings.map((p) =>
      view`<tr key=${p.n}>
          <td data-label="#" class="num">${count(p.n)}</td>
          <td data-label="When"><${At} iso=${p.at} /></td>
          <td data-label="Kind"><span class=${
        failing(p) ? "state state-down" : p.kind === "success" ? "state state-up" : "tag"
      }>${kindWords(p)}</span></td>
          <td data-label="Method">${p.method}</td>
          <td data-label="From">${p.address ?? view`<span class="muted">—</span>`}</td>
          <td data-label="Body" class="text-cell"><${PingBody} ping=${p} /></td>
        </tr>`
    )
  }
      </tbody>
    </table>
  </div>`;
}

/** @param {{ heartbeat: Heartbeat }} props */
function Facts({ heartbeat: h }) {
  return view`<dl class="facts">
    <div>
      <dt>State</dt>
      <dd>${h.state === "new" ? "new: no ping and no deadline missed yet" : h.state}${
    h.state_since ? view` since <${At} iso=${h.state_since} />` : ""
  }</dd>
    </div>
    <div>
      <dt>Expected</dt>
      <dd>${timingWords(h)}</dd>
    </div>
    <div>
      <dt>A run takes</dt>
      <dd>${runWords(h)}</dd>
    </div>
    <div>
      <dt>Last ping</dt>
      <dd><${Ago} iso=${h.last_ping_at} />${h.last_ping_kind ? ` (${h.last_ping_kind})` : ""}</dd>
    </div>
    <div>
      <dt>Last run time</dt>
      <dd>${h.last_duration_ms === null ? "not timed yet" : millis(h.last_duration_ms)}</dd>
    </div>
    <div>
      <dt>Next deadline</dt>
      <dd>${
    h.next_deadline
      ? view`<${At} iso=${h.next_deadline} /> (${deadlineWords(h.next_deadline)})`
      : "none pending"
  }</dd>
    </div>
    <div>
      <dt>Pings received</dt>
      <dd>${count(h.pings_total)}</dd>
    </div>
  </dl>`;
}

/** @param {{ heartbeat: Heartbeat, canWrite: boolean }} props */
function PingUrl({ heartbeat, canWrite }) {
  if (!canWrite) {
    return view`<section aria-labelledby="ping-url-title">
      <h2 id="ping-url-title">Ping URL</h2>
      <p><code>${heartbeat.ping_url}</code></p>
      <p class="muted">Its token is hidden from a read-only key: sign in with the service's key to
        see and copy it.</p>
    </section>`;
  }
  return view`<section aria-labelledby="ping-url-title">
    <h2 id="ping-url-title">Ping URL</h2>
    <p>The job calls it (GET, HEAD or POST) when it has run; add <code>/start</code> when it
      starts, <code>/fail</code> when it fails, or <code>/</code> and its exit code. Keep it
      secret: anyone with it can ping.</p>
    <${CopyBox} id="ping-url" label="ping URL" text=${heartbeat.ping_url} />
  </section>`;
}

/** @param {{ heartbeat: Heartbeat }} props */
function Snippets({ heartbeat }) {
  return view`<section aria-labelledby="snippets-title">
    <h2 id="snippets-title">Snippets</h2>
    <p class="muted">Each pings this heartbeat; replace <code>/path/to/job</code> with the job.
      More in the heartbeats guide (docs/heartbeats.md).</p>
    ${
    snippets(heartbeat).map((s) =>
      view`<details class="snippet">
        <summary>${s.label}</summary>
        <${CopyBox} id=${s.id} label=${s.label} text=${s.text} />
      </details>`
    )
  }
  </section>`;
}

/** @param {{ project: string, name: string }} props */
export function HeartbeatPage({ project, name }) {
  const notice = useNotice();
  const canWrite = useCanWrite();
  const [round, setRound] = useState(0);
  const { data, error, loading, reload } = useLoad(
    async () => {
      const heartbeat = await get(heartbeatPath(project, name));
      const [pings, incidents] = await Promise.all([
        get(`${heartbeatPath(project, name)}/pings`),
        // Its incidents are its probe's: named by the heartbeat's probe_id.
        get(
          `/incidents?project=${seg(project)}&probe_id=${
            seg(heartbeat.data.probe_id)
          }&limit=${INCIDENTS_SHOWN}`,
        ),
      ]);
      return { heartbeat: heartbeat.data, pings: pings.data, incidents: incidents.data };
    },
    [project, name],
    round,
  );
  useEvery(REFRESH_MS, () => setRound((n) => n + 1));
  useTitle(name);
  const heartbeat = data?.heartbeat;
  const remove = async () => {
    await del(heartbeatPath(project, name));
    notice(`Heartbeat ${name} was deleted.`);
    navigate(href.project(project));
  };
  const runs = runsOf(data?.pings ?? []);
  return view`<div>
    <p class="crumbs">
      <a href=${href.overview()}>Overview</a> › <a href=${href.project(project)}>${project}</a> ›
      heartbeat
    </p>
    <div class="page-head">
      <h1 tabindex="-1">${name}</h1>
      ${heartbeat && view`<${StateBadge} state=${heartbeat.state} />`}
    </div>
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the heartbeat" />`}
    ${
    data && heartbeat && view`
      <${Facts} heartbeat=${heartbeat} />
      ${
      canWrite && view`<div class="actions">
        <a class="button" href=${href.editHeartbeat(project, name)}>Edit heartbeat</a>
        <${ConfirmButton} label="Delete heartbeat" confirmLabel="Delete heartbeat"
          question="Delete this heartbeat? Its ping URL stops working and its pings go too."
          onConfirm=${remove} />
      </div>`
    }
      <${PingUrl} heartbeat=${heartbeat} canWrite=${canWrite} />
      <section aria-labelledby="runs-title">
        <h2 id="runs-title">Run times</h2>
        <p class="muted">${runsSummary(runs)}</p>
        ${
      runs.length > 0 && view`<figure class="figure">
          <${RunTimeChart} runs=${runs} />
          <figcaption>One bar per timed run, oldest on the left: <span class="key o-up">
            success</span> <span class="key o-down">failed</span></figcaption>
        </figure>`
    }
      </section>
      <section aria-labelledby="pings-title">
        <h2 id="pings-title">Latest pings</h2>
        <${PingTable} pings=${data.pings} />
      </section>
      <section aria-labelledby="incidents-title">
        <h2 id="incidents-title">Incidents</h2>
        <${IncidentTable} incidents=${data.incidents} onChanged=${reload} />
      </section>
      ${canWrite && view`<${Snippets} heartbeat=${heartbeat} />`}
    `
  }
  </div>`;
}
