// @ts-check
/** Incidents: the overview's open ones, a probe's history, and acknowledging one. */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { useCanWrite } from "./scope.js";
import { useFocusWhenLost } from "./focus.js";
import { post, seg } from "./api.js";
import { href } from "./routes.js";
import { Ago, At, describe } from "./parts.js";
import { duration, plural } from "./format.js";
/** @import { ApiError } from "./api.js" */
/** @import { Incident } from "./api_types.d.ts" */

/**
 * `POST /incidents/{id}/acknowledge`, then `onDone()`; an error is shown beside the button.
 * @param {{ incident: Incident, onDone: () => void }} props
 */
export function AcknowledgeButton({ incident, onDone }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const canWrite = useCanWrite();
  // The button goes once the incident is acknowledged: its place, the new state, keeps focus.
  const acknowledged = useFocusWhenLost(incident.acknowledged_at);
  if (incident.acknowledged_at) {
    return view`<span class="muted" tabindex="-1" ref=${acknowledged}>Acknowledged <${Ago}
      iso=${incident.acknowledged_at} /></span>`;
  }
  if (incident.state !== "open" || !canWrite) return view`<span class="muted">—</span>`;
  const acknowledge = async () => {
    setBusy(true);
    setError(null);
    try {
      await post(`/incidents/${seg(incident.id)}/acknowledge`);
      onDone();
    } catch (e) {
      setError(/** @type {ApiError} */ (e));
    } finally {
      setBusy(false);
    }
  };
  return view`<span>
    <button type="button" disabled=${busy} onClick=${acknowledge}
      aria-label=${`Acknowledge incident ${incident.id} (${incident.label})`}>Acknowledge</button>
    ${error && view`<span class="error" role="alert"> ${describe(error)}</span>`}
  </span>`;
}

const openFor = (/** @type {Incident} */ incident) =>
  Math.max(0, Math.round((Date.now() - Date.parse(incident.started_at)) / 1000));

/** Open incidents listed before "Show all" is pressed. */
const FIRST_INCIDENTS = 10;

/** @param {{ incident: Incident, onChanged: () => void }} props */
function OpenIncident({ incident, onChanged }) {
  const lastError = incident.last_error && incident.last_error !== incident.cause
    ? view`; last error <code>${incident.last_error}</code>`
    : "";
  return view`<li class="incident">
    <span class="state state-down">down</span>
    <span class="incident-what">
      <a href=${href.probe(incident.project, incident.probe_id)}>${incident.label}</a>
      <span class="muted"> in ${incident.project}</span>
    </span>
    <span class="incident-facts">since <${At} iso=${incident.started_at} /> (${
    duration(openFor(incident))
  }); ${incident.cause}; ${plural(incident.runs_failed, "failed run")}${lastError}${
    incident.suppressed ? `; ${incident.suppressed}` : ""
  }</span>
    <${AcknowledgeButton} incident=${incident} onDone=${onChanged} />
  </li>`;
}

/**
 * The open incidents, newest first, each linking to its probe; the first ten until asked.
 * @param {{ incidents: Incident[], onChanged: () => void }} props
 */
export function OpenIncidents({ incidents, onChanged }) {
  const [all, setAll] = useState(false);
  const shown = all ? incidents : incidents.slice(0, FIRST_INCIDENTS);
  return view`<section class="incidents" aria-labelledby="incidents-title">
    <h2 id="incidents-title">Open incidents${incidents.length ? ` (${incidents.length})` : ""}</h2>
    ${incidents.length === 0 && view`<p class="muted">No open incidents.</p>`}
    ${
    incidents.length > 0 && view`<ul class="incident-list">${
      shown.map((incident) =>
        view`<${OpenIncident} key=${incident.id} incident=${incident} onChanged=${onChanged} />`
      )
    }</ul>`
  }
    ${
    incidents.length > shown.length && view`<button type="button" onClick=${() =>
      setAll(true)}>Show all ${incidents.length} open incidents</button>`
  }
    <p><a href=${href.incidents()}>All incidents, open and resolved</a></p>
  </section>`;
}

/**
 * A probe's incidents, open and resolved, newest first.
 * @param {{ incidents: Incident[], onChanged: () => void }} props
 */
export function IncidentTable({ incidents, onChanged }) {
  if (incidents.length === 0) return view`<p class="muted">No incidents.</p>`;
  return view`
    <div class="table-wrap">
      <table class="grid">
        <caption class="sr-only">Incidents of this probe</caption>
        <thead>
          <tr>
            <th scope="col">State</th>
            <th scope="col">Started</th>
            <th scope="col">Resolved</th>
            <th scope="col">Duration</th>
            <th scope="col">Cause</th>
            <th scope="col">Failed runs</th>
            <th scope="col">Acknowledged</th>
          </tr>
        </thead>
        <tbody>
          ${
    incidents.map((i) =>
      view`
              <tr key=${i.id}>
                <td data-label="State">${
        i.state === "open"
          ? view`<span class="state state-down">open</span>`
          : view`<span class="state state-up">resolved</span>`
      }</td>
                <td data-label="Started">
                  <${At} iso=${i.started_at} />
                </td>
                <td data-label="Resolved">${
        i.resolved_at
          ? view`<${At} iso=${i.resolved_at} /> <span class="muted">(${i.resolution})</span>`
          : "—"
      }</td>
                <td data-label="Duration">${duration(i.duration_seconds ?? openFor(i))}</td>
                <td data-label="Cause">${i.cause}${
        i.suppressed ? view`<span class="url">${i.suppressed}</span>` : ""
      }</td>
                <td data-label="Failed runs" class="num">${i.runs_failed}</td>
                <td data-label="Acknowledged">
                  <${AcknowledgeButton} incident=${i} onDone=${onChanged} />
                </td>
              </tr>
            `
    )
  }
        </tbody>
      </table>
    </div>
  `;
}
