// @ts-check
/**
 * The locations page (issue 21): every place probes run from with its runners' health (kind,
 * probes, runners seen in the last minute, last seen, version, checks per minute, schedule lag).
 * A key that may write adds remote locations, rotates their tokens and deletes them; a token is
 * shown once, in the answer that made it, and never again. A read-only key sees the same table
 * without the controls.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { useAbilities } from "./scope.js";
import { del, get, post, seg } from "./api.js";
import { useEvery, useLoad, useTitle } from "./load.js";
import { href } from "./routes.js";
import { Ago, ConfirmButton, describe, ErrorNote, Loading, StatusNote } from "./parts.js";
import { Field, FormError, useForm } from "./forms.js";
import { count, plural } from "./format.js";
import { RunnerSetup } from "./runner_setup.js";

/** @import { operations as Operations } from "./openapi.gen.ts" */
/** @import { ApiError } from "./api.js" */
/**
 * @typedef {Operations["locations-list"]["responses"][200]["content"]["application/json"]}
 *   LocationList
 * @typedef {LocationList["data"][number]} Location
 * @typedef {Operations["locations-create"]["responses"][201]["content"]["application/json"]}
 *   LocationCreated
 * @typedef {{ name: string, token: string, verb: string }} ShownToken
 */

const REFRESH_MS = 15_000;
/** Behind its schedule by this much (s) or more: the lag is shown as a problem. */
const LAG_WARNING_S = 60;

/**
 * A location's runners in words, with a warning where probes wait for a runner that is gone.
 * @param {{ location: Location }} props
 */
function RunnersCell({ location }) {
  const { runners, probes, kind } = location;
  if (runners === 0 && probes > 0) {
    const who = kind === "remote" ? "no runner" : "no runner (RUNNER=off?)";
    return view`<span class="state state-down">${who}</span>`;
  }
  return view`<span>${count(runners)}</span>`;
}

/**
 * The lag in seconds, marked when it is a minute or more.
 * @param {{ seconds: number }} props
 */
function LagCell({ seconds }) {
  const text = seconds < 10 ? `${seconds.toFixed(1)} s` : `${Math.round(seconds)} s`;
  if (seconds >= LAG_WARNING_S) return view`<span class="state state-down">${text}</span>`;
  return view`<span>${text}</span>`;
}

/**
 * The token of a location, shown this once with what to do with it.
 * @param {{ shown: ShownToken, onDone: () => void }} props
 */
function TokenOnce({ shown, onDone }) {
  // Its heading takes focus, as a new page's does: what follows is to be read, then copied.
  const heading = useRef(/** @type {HTMLHeadingElement | null} */ (null));
  useEffect(() => heading.current?.focus(), [shown]);
  return view`
    <section class="notice token-once" aria-labelledby="token-title">
      <h2 id="token-title" tabindex="-1" ref=${heading}>${shown.verb}: the token of ${shown.name}</h2>
      <p>Shown this once: the service keeps only its digest. Give it to the location's runners.</p>
      <${RunnerSetup} location=${shown.name} token=${shown.token} />
      <div class="actions">
        <button type="button" onClick=${onDone}>I have kept it</button>
      </div>
    </section>
  `;
}

/**
 * The form that adds a remote location; its token is shown by the page.
 * @param {{ onAdded: (token: ShownToken) => void }} props
 */
function AddLocation({ onAdded }) {
  const fields = ["name", "label"];
  const form = useForm(fields);
  const errors = /** @type {Record<string, string | undefined>} */ (form.errors);
  const [values, setValues] = useState({ name: "", label: "" });
  /** @param {"name" | "label"} name */
  const set = (name) => (/** @type {string} */ value) =>
    setValues((v) => ({ ...v, [name]: value }));
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      const label = values.label.trim();
      /** @type {LocationCreated} */
      let answer;
      try {
        answer = await post("/locations", {
          name: values.name.trim(),
          ...(label && { label }),
        });
      } catch (/** @type {any} */ error) {
        // A name taken is the name's problem: said beside it.
        if (error.code === "conflict") {
          error.details = [{ path: "name", message: error.message }];
        }
        throw error;
      }
      setValues({ name: "", label: "" });
      onAdded({ name: answer.data.name, token: answer.data.token, verb: "Location added" });
    });
  };
  return view`
    <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
      aria-labelledby="add-location-title">
      <h2 id="add-location-title">Add a remote location</h2>
      <${FormError} message=${form.formError} />
      <${Field} name="name" label="Name" value=${values.name} onInput=${set("name")}
        error=${errors.name} autocomplete="off"
        hint="Letters, digits, '.', '_' and '-', starting with a letter or digit; probes name it." />
      <${Field} name="label" label="Label (optional)" value=${values.label}
        onInput=${set("label")} error=${errors.label} />
      <div class="actions">
        <button type="submit" class="primary" disabled=${form.busy}>Add location</button>
      </div>
    </form>
  `;
}

/**
 * Rotate and delete, for a remote location.
 * @param {{
 *   location: Location,
 *   onToken: (token: ShownToken) => void,
 *   onDeleted: (name: string) => void,
 * }} props
 */
function RowActions({ location, onToken, onDeleted }) {
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const rotate = async () => {
    setError(null);
    try {
      /** @type {LocationCreated} */
      const answer = await post(`/locations/${seg(location.name)}/token`);
      onToken({ name: location.name, token: answer.data.token, verb: "Token rotated" });
    } catch (e) {
      setError(/** @type {ApiError} */ (e));
    }
  };
  const remove = async () => {
    setError(null);
    try {
      await del(`/locations/${seg(location.name)}`);
      onDeleted(location.name);
    } catch (e) {
      setError(/** @type {ApiError} */ (e));
    }
  };
  return view`
    <div class="row-actions">
      <${ConfirmButton} label=${`Rotate token of ${location.name}`} confirmLabel="Rotate token"
        question=${`Rotate the token of ${location.name}? Its runners stop until they get the new one.`}
        onConfirm=${rotate} />
      <${ConfirmButton} label=${`Delete ${location.name}`} confirmLabel="Delete location"
        question=${`Delete ${location.name}? Its token stops working; its results stay.`}
        onConfirm=${remove} />
      ${error ? view`<p class="error" role="alert">${describe(error)}</p>` : ""}
    </div>
  `;
}

/**
 * @param {{
 *   locations: Location[],
 *   canAdminister: boolean,
 *   onToken: (token: ShownToken) => void,
 *   onDeleted: (name: string) => void,
 * }} props
 */
function LocationTable({ locations, canAdminister, onToken, onDeleted }) {
  return view`
    <div class="table-wrap">
      <table class="grid locations">
        <caption class="sr-only">Locations and their runners' health</caption>
        <thead>
          <tr>
            <th scope="col">Location</th>
            <th scope="col">Kind</th>
            <th scope="col" class="num">Probes</th>
            <th scope="col" class="num">Runners</th>
            <th scope="col">Last seen</th>
            <th scope="col">Version</th>
            <th scope="col" class="num">Checks/min</th>
            <th scope="col" class="num">Lag</th>
            ${canAdminister && view`<th scope="col">Actions</th>`}
          </tr>
        </thead>
        <tbody>
          ${
    locations.map((/** @type {Location} */ l) =>
      view`
              <tr key=${l.name} data-location=${l.name}>
                <th scope="row" data-label="Location">
                  <span class="name">${l.name}</span>
                  ${l.label && view` <span class="muted">${l.label}</span>`}
                </th>
                <td data-label="Kind">${l.kind === "local" ? "built-in" : "remote"}</td>
                <td data-label="Probes" class="num">${count(l.probes)}</td>
                <td data-label="Runners" class="num"><${RunnersCell} location=${l} /></td>
                <td data-label="Last seen"><${Ago} iso=${l.last_seen_at} /></td>
                <td data-label="Version">${l.version ?? view`<span class="muted">—</span>`}</td>
                <td data-label="Checks/min" class="num">${count(l.checks_per_minute)}</td>
                <td data-label="Lag" class="num"><${LagCell} seconds=${l.lag_seconds} /></td>
                ${
        canAdminister && view`<td data-label="Actions">${
          l.kind === "remote"
            ? view`<${RowActions} location=${l} onToken=${onToken} onDeleted=${onDeleted} />`
            : view`<span class="muted">built in</span>`
        }</td>`
      }
              </tr>
            `
    )
  }
        </tbody>
      </table>
    </div>
  `;
}

export function LocationsPage() {
  useTitle("Locations");
  const canAdminister = useAbilities().administer;
  /** @type {[ShownToken | null, (t: ShownToken | null) => void]} */
  const [shown, setShown] = useState(/** @type {ShownToken | null} */ (null));
  const [deleted, setDeleted] = useState(/** @type {string | null} */ (null));
  const { data: loaded, error, loading, reload } = useLoad(() => get("/locations"), []);
  const data = /** @type {LocationList | undefined} */ (loaded);
  useEvery(REFRESH_MS, reload);
  const locations = data?.data ?? [];
  const remote = locations.filter((l) => l.kind === "remote").length;
  const onToken = (/** @type {ShownToken} */ token) => {
    setDeleted(null);
    setShown(token);
    reload();
  };
  const onDeleted = (/** @type {string} */ name) => {
    setShown(null);
    setDeleted(name);
    reload();
  };
  return view`<div>
    <p class="crumbs"><a href=${href.overview()}>Overview</a> › Locations</p>
    <div class="page-head">
      <h1 tabindex="-1">Locations</h1>
    </div>
    <p class="muted">
      Where probes run from: the built-in location (the service's own runners) and remote ones,
      whose runners reach the service with the location's token. Health is that of the last
      minute; it refreshes every ${REFRESH_MS / 1000} s.
    </p>
    ${shown && view`<${TokenOnce} shown=${shown} onDone=${() => setShown(null)} />`}
    <${StatusNote} message=${deleted ? `Location ${deleted} was deleted.` : ""} />
    <${ErrorNote} error=${error}>Could not load the locations: <//>
    ${!data && loading && view`<${Loading} what="Loading the locations" />`}
    ${
    data && view`
      <p class="muted" aria-live="polite">${
      plural(remote, "remote location")
    }, and the built-in one.</p>
      <${LocationTable} locations=${locations} canAdminister=${canAdminister} onToken=${onToken}
        onDeleted=${onDeleted} />
    `
  }
    ${canAdminister && view`<${AddLocation} onAdded=${onToken} />`}
  </div>`;
}
