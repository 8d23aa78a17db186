// @ts-check
/**
 * A project's badges (`/projects/{project}/badges`): tokens that serve the status, uptime and
 * latency badges of one probe or of the whole project. Made, rotated (the old token stops) and
 * deleted here; the Markdown and HTML snippets to copy are shown when a badge is made or rotated,
 * and again with Snippet (the list holds each token: it reveals only its badge). A token made
 * before tokens were kept has none: rotating it once gives one. A read-only key sees the list.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
/** @import { ApiError } from "./api.js" */
import { useCanWrite } from "./scope.js";
import { del, get, post, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { At, ConfirmButton, describe, ErrorNote, Loading, StatusNote } from "./parts.js";
import { FormError, useForm } from "./forms.js";
import { CopyBox, ProjectSettingsHead } from "./settings_parts.js";

/** @import { Answer } from "./api_types.d.ts" */
/**
 * @typedef {NonNullable<Answer<"get", "/projects/{project}/badges">>["data"][number]} Badge
 * @typedef {NonNullable<Answer<"post", "/projects/{project}/badges">>["data"]} NewBadge
 * @typedef {NonNullable<Answer<"get", "/projects/{project}/probes">>["data"][number]} Probe
 * @typedef {"status" | "uptime" | "latency"} BadgeKind
 */

/** @type {[BadgeKind, string][]} */
const BADGE_KINDS = [["status", "Status"], ["uptime", "Uptime"], ["latency", "Latency p95"]];
const WINDOWS = ["24h", "7d", "30d"];

/**
 * What a badge shows, in words.
 * @param {Badge} badge
 * @param {Map<string, Probe>} probes
 */
function subject(badge, probes) {
  if (badge.scope === "project") return "The whole project";
  return `Probe ${probeName(badge, probes)}`;
}

/**
 * The name of a probe's badge's probe: its label, else its URL, else its id.
 * @param {Badge} badge
 * @param {Map<string, Probe>} probes
 */
function probeName(badge, probes) {
  const probe = badge.probe_id ? probes.get(badge.probe_id) : undefined;
  return probe ? probe.label ?? probe.url : String(badge.probe_id);
}

/**
 * The badge with its token, as a new one is answered; null for a token made before tokens were
 * kept (only its digest was stored).
 * @param {Badge} badge
 * @returns {NewBadge | null}
 */
function withToken(badge) {
  const { token, urls } = badge;
  return token !== null && urls !== null ? { ...badge, token, urls } : null;
}

/**
 * The list's row, or the answer to a rotation the list was read before: a reload after Rotate
 * can come later than a click on Snippet, which must show the new token.
 * @param {Badge} row
 * @param {NewBadge | undefined} answer
 * @returns {Badge}
 */
function latest(row, answer) {
  if (!answer?.rotated_at) return row;
  const listed = row.rotated_at ? Date.parse(row.rotated_at) : -Infinity;
  return Date.parse(answer.rotated_at) > listed ? { ...row, ...answer } : row;
}

/**
 * The badge image's address, absolute (as it goes into a README).
 * @param {NewBadge} badge
 * @param {BadgeKind} kind
 * @param {string} window
 */
function imageUrl(badge, kind, window) {
  const path = kind === "status"
    ? badge.urls.status_svg
    : `/badge/${badge.token}/${kind}.svg?window=${window}`;
  return `${location.origin}${path}`;
}

/**
 * A badge's token (just made, rotated, or asked for with Snippet): a preview and the snippets.
 * `shows` names what the badge is of in its image's alternative text: the project, or the probe.
 * @param {{ badge: NewBadge, name: string, shows: string, project: string,
 *   onDismiss: () => void }} props
 */
function FreshToken({ badge, name, shows, project, onDismiss }) {
  const [kind, setKind] = useState(/** @type {BadgeKind} */ ("status"));
  const [window, setWindow] = useState("24h");
  const src = imageUrl(badge, kind, window);
  const text = kind === "status"
    ? "status"
    : `${kind === "latency" ? "latency p95" : kind} ${window}`;
  const alt = `${shows} ${text}`;
  const page = `${location.origin}/status/${encodeURIComponent(project)}`;
  const markdown = `[![${alt}](${src})](${page})`;
  const html = `<a href="${page}"><img src="${src}" alt="${alt}"></a>`;
  const shields = `https://img.shields.io/endpoint?url=${
    encodeURIComponent(`${location.origin}${badge.urls.json}?kind=${kind}&window=${window}`)
  }`;
  return view`<section class="notice secret-once" aria-labelledby="fresh-title">
    <h2 id="fresh-title" tabindex="-1">Badge ${badge.id}: ${name}</h2>
    <p>Copy a snippet for a README or a wiki; Snippet in the list below shows it again later.</p>
    <fieldset class="choices">
      <legend>Badge</legend>
      ${
    BADGE_KINDS.map(([value, label]) =>
      view`<label class="choice" key=${value}>
          <input type="radio" name="badge-kind" value=${value} checked=${kind === value}
            onChange=${() => setKind(value)} /> ${label}
        </label>`
    )
  }
    </fieldset>
    ${
    kind !== "status" && view`<div class="field">
      <label for="badge-window">Window</label>
      <select id="badge-window" value=${window}
        onChange=${(/** @type {Event} */ e) =>
      setWindow(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
        ${WINDOWS.map((w) => view`<option value=${w} key=${w}>${w}</option>`)}
      </select>
    </div>`
  }
    <p>Preview: <img src=${src} alt=${alt} class="badge-preview" /></p>
    <div class="snippets">
      <${CopyBox} id="snippet-markdown" label="Markdown" text=${markdown} />
      <${CopyBox} id="snippet-html" label="HTML" text=${html} />
      <${CopyBox} id="snippet-shields" label="Shields URL" text=${shields} />
    </div>
    <p class="hint">The links point at ${location.origin}, the address this dashboard is open
      at; behind a proxy, put the service's public address in their place. The status page link
      works while the page is public.</p>
    <div class="actions"><button type="button" onClick=${onDismiss}>Done</button></div>
  </section>`;
}

/**
 * A new badge, for the project or one of its probes.
 * @param {{ project: string, probes: Probe[], onCreated: (badge: NewBadge) => void }} props
 */
function NewBadgeForm({ project, probes, onCreated }) {
  const form = useForm(["probe_id"]);
  const [target, setTarget] = useState("");
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      const answer = await post(
        `/projects/${seg(project)}/badges`,
        target ? { probe_id: target } : {},
      );
      onCreated(answer.data);
    });
  };
  const error = form.errors.probe_id;
  return view`<form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
    aria-labelledby="new-badge-title">
    <h2 id="new-badge-title">Make a badge</h2>
    <${FormError} message=${form.formError} />
    <div class=${error ? "field invalid" : "field"}>
      <label for="badge-for">For</label>
      <select id="badge-for" name="probe_id" value=${target}
        aria-describedby=${error ? "badge-for-hint badge-for-error" : "badge-for-hint"}
        aria-invalid=${error ? "true" : undefined}
        onChange=${(/** @type {Event} */ e) =>
    setTarget(/** @type {HTMLSelectElement} */ (e.currentTarget).value)}>
        <option value="">The whole project (its worst state, all probes' uptime)</option>
        ${
    probes.map((p) =>
      view`<option value=${p.probe_id} key=${p.probe_id}>Probe ${p.label ?? p.url}</option>`
    )
  }
      </select>
      <p class="hint" id="badge-for-hint">A token serves the status, uptime and latency badges of
        what it is for, and nothing else.</p>
      ${error && view`<p class="field-error" id="badge-for-error">${error}</p>`}
    </div>
    <div class="actions">
      <button type="submit" class="primary" disabled=${form.busy}>Make badge</button>
    </div>
  </form>`;
}

/**
 * The project's badges, each with Rotate and Delete for a key that may write.
 * @param {{
 *   project: string,
 *   badges: Badge[],
 *   probes: Map<string, Probe>,
 *   onRotate: (badge: Badge) => Promise<void>,
 *   onDelete: (badge: Badge) => Promise<void>,
 *   onSnippet: (badge: NewBadge) => void,
 * }} props
 */
function BadgeTable({ project, badges, probes, onRotate, onDelete, onSnippet }) {
  const canWrite = useCanWrite();
  return view`<section aria-labelledby="badges-title">
    <h2 id="badges-title">Badges (${badges.length})</h2>
    ${
    badges.length === 0 ? view`<p class="muted">No badges yet.</p>` : view`<div class="table-wrap">
      <table class="grid">
        <caption class="sr-only">Badges of ${project}</caption>
        <thead>
          <tr>
            <th scope="col">Badge</th>
            <th scope="col">For</th>
            <th scope="col">Made</th>
            <th scope="col">Rotated</th>
            <th scope="col"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${
      badges.map((b) =>
        view`<tr key=${b.id}>
            <th scope="row" data-label="Badge">${b.id}</th>
            <td data-label="For">${subject(b, probes)}</td>
            <td data-label="Made"><${At} iso=${b.created_at} /></td>
            <td data-label="Rotated">${
          b.rotated_at
            ? view`<${At} iso=${b.rotated_at} />`
            : view`<span class="muted">never</span>`
        }</td>
            <td data-label="Actions"><span class="actions">
              ${
          withToken(b)
            ? view`<button type="button" aria-label=${`Snippet of badge ${b.id}`}
                onClick=${() => onSnippet(/** @type {NewBadge} */ (withToken(b)))}>Snippet</button>`
            : view`<span class="muted">made before tokens were kept: rotate once for a snippet</span>`
        }
              ${
          canWrite && view`<${ConfirmButton} label="Rotate" confirmLabel=${`Rotate badge ${b.id}`}
                question="A new token; the old one stops at once. Rotate?"
                onConfirm=${() => onRotate(b)} />
              <${ConfirmButton} label="Delete" confirmLabel=${`Delete badge ${b.id}`}
                question="Delete it? Its token stops at once." onConfirm=${() => onDelete(b)} />`
        }
            </span></td>
          </tr>`
      )
    }
        </tbody>
      </table>
    </div>`
  }
  </section>`;
}

/** @param {{ project: string }} props */
export function BadgesPage({ project }) {
  useTitle(`Badges of ${project}`);
  const canWrite = useCanWrite();
  const [fresh, setFresh] = useState(/** @type {NewBadge | null} */ (null));
  const [message, setMessage] = useState("");
  const [failure, setFailure] = useState(/** @type {ApiError | null} */ (null));
  const [rotated, setRotated] = useState(/** @type {Map<string, NewBadge>} */ (new Map()));
  const { data, error, loading, reload } = useLoad(
    () =>
      Promise.all([
        get(`/projects/${seg(project)}/badges`),
        get(`/projects/${seg(project)}/probes`),
      ]),
    [project],
  );
  const badges = (data?.[0].data ?? []).map((b) => latest(b, rotated.get(b.id)));
  const probeList = data?.[1].data ?? [];
  const probes = new Map(probeList.map((p) => [p.probe_id, p]));
  const show = (/** @type {NewBadge} */ badge, /** @type {string} */ text, changed = true) => {
    setFailure(null);
    setFresh(badge);
    setMessage(text);
    if (changed) reload();
    // The snippets are what the user came for: focus (and so scroll) to them.
    requestAnimationFrame(() => document.getElementById("fresh-title")?.focus());
  };
  const rotate = async (/** @type {Badge} */ badge) => {
    try {
      const answer = await post(`/projects/${seg(project)}/badges/${seg(badge.id)}/rotate`);
      setRotated((known) => new Map(known).set(badge.id, answer.data));
      show(answer.data, `Badge ${badge.id} was rotated: its old token no longer works.`);
    } catch (e) {
      setFailure(/** @type {ApiError} */ (e));
    }
  };
  const remove = async (/** @type {Badge} */ badge) => {
    try {
      await del(`/projects/${seg(project)}/badges/${seg(badge.id)}`);
      if (fresh?.id === badge.id) setFresh(null);
      setFailure(null);
      setMessage(`Badge ${badge.id} was deleted: its token no longer works.`);
      reload();
    } catch (e) {
      setFailure(/** @type {ApiError} */ (e));
    }
  };
  return view`<div>
    <${ProjectSettingsHead} project=${project} title="Badges" current="badges" />
    <p class="muted">Small images of a probe's or the project's status, uptime or latency, for a
      README or a wiki. Each is served by a token of its own, without the API key.</p>
    <${StatusNote} message=${message} />
    ${failure && view`<p class="error" role="alert">${describe(failure)}</p>`}
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the badges" />`}
    ${
    fresh && view`<${FreshToken} key=${fresh.token} badge=${fresh} project=${project}
      name=${subject(fresh, probes)}
      shows=${fresh.scope === "project" ? project : probeName(fresh, probes)}
      onDismiss=${() => setFresh(null)} />`
  }
    ${
    data && view`<${BadgeTable} project=${project} badges=${badges} probes=${probes}
      onRotate=${rotate} onDelete=${remove}
      onSnippet=${(/** @type {NewBadge} */ b) => show(b, "", false)} />`
  }
    ${
    canWrite && data && view`<${NewBadgeForm} project=${project} probes=${probeList}
      onCreated=${(/** @type {NewBadge} */ b) => show(b, `Badge ${b.id} was made.`)} />`
  }
  </div>`;
}
