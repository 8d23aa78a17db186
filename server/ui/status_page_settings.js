// @ts-check
/**
 * A project's public status page (`/projects/{project}/status-page`): whether it is public, its
 * title and description, whether it shows URLs, the probes it shows, and links to the page and
 * its JSON. Also the link a project's page carries to its status page. A read-only key sees the
 * settings without the form.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { useCanWrite } from "./scope.js";
import { get, patch, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href } from "./routes.js";
import { ErrorNote, Loading } from "./parts.js";
import { FormError, useForm } from "./forms.js";
import { CheckField, ProjectSettingsHead, TextField } from "./settings_parts.js";

/** @import { Answer } from "./api_types.d.ts" */
/**
 * @typedef {NonNullable<Answer<"get", "/projects/{project}/status-page">>["data"]} Settings
 * @typedef {NonNullable<Answer<"get", "/projects/{project}/probes">>["data"][number]} Probe
 */

/**
 * Links to the page and its JSON, said to answer 404 while the page is private.
 * @param {{ settings: Settings }} props
 */
function PageLinks({ settings }) {
  const origin = location.origin;
  return view`<ul class="links-list">
    <li>The page: <a href=${settings.page_path}>${origin}${settings.page_path}</a></li>
    <li>Its JSON: <a href=${settings.json_path}>${origin}${settings.json_path}</a></li>
  </ul>
  ${
    !settings.public &&
    view`<p class="muted">While the page is private, both answer 404, as for a project that does
      not exist.</p>`
  }`;
}

/**
 * The probes a page shows: those `ids` names, in its order, or every one when it is null.
 * @param {Probe[]} probes
 * @param {string[] | null} ids
 */
const shownOf = (probes, ids) =>
  ids === null ? probes : ids.flatMap((id) => probes.filter((p) => p.probe_id === id));

/**
 * The probes the page shows, named as it names them.
 * @param {{ probes: Probe[], ids: string[] | null, showUrls: boolean }} props
 */
function PageProbes({ probes: all, ids, showUrls }) {
  const probes = shownOf(all, ids);
  if (probes.length === 0) {
    return view`<p class="muted">${
      all.length === 0 ? "The project has no probes" : "No probe is chosen"
    }: the page shows none.</p>`;
  }
  return view`<p>The page shows ${
    ids === null
      ? `every probe of the project (${probes.length})`
      : probes.length === 1
      ? "the one chosen probe"
      : `${probes.length} chosen probes`
  }, with their state and 90 days of uptime, and their incidents without their error texts:</p>
  <ul class="links-list">
    ${
    probes.map((p) =>
      view`<li key=${p.probe_id}>${
        p.label
          ? view`<strong>${p.label}</strong>${showUrls ? view` <code>${p.url}</code>` : ""}`
          : showUrls
          ? view`<code>${p.url}</code>`
          : view`<span class="muted">no label: shown as "Check N" (<code>${p.url}</code>)</span>`
      }</li>`
    )
  }
  </ul>
  <p class="hint">A probe without a label is shown by its URL when URLs are shown, and as
    "Check 1", "Check 2", … (in the order the probes were made) otherwise. Give probes labels on
    their edit pages.</p>`;
}

/**
 * Which probes the page shows: every one, or those ticked (in the project's order).
 * @param {{ probes: Probe[], chosen: string[] | null, onChange: (ids: string[] | null) => void,
 *   error?: string }} props
 */
function ProbeChoice({ probes, chosen, onChange, error }) {
  const toggle = (/** @type {string} */ id, /** @type {boolean} */ on) => {
    const ids = new Set(chosen ?? []);
    if (on) ids.add(id);
    else ids.delete(id);
    onChange(probes.map((p) => p.probe_id).filter((p) => ids.has(p)));
  };
  return view`<fieldset class=${error ? "choices invalid" : "choices"}>
    <legend>Probes on the page</legend>
    <${CheckField} name="all-probes" idPrefix="page" label="Every probe of the project"
      checked=${chosen === null}
      onChange=${(/** @type {boolean} */ on) => onChange(on ? null : probes.map((p) => p.probe_id))}
      hint="Probes made later are shown too. Off: only the probes ticked below." />
    ${
    chosen !== null && probes.map((p) =>
      view`<${CheckField} key=${p.probe_id} name=${`probe-${p.probe_id}`} idPrefix="page"
        label=${p.label ?? p.url} checked=${chosen.includes(p.probe_id)}
        onChange=${(/** @type {boolean} */ on) =>
        toggle(p.probe_id, on)} />`
    )
  }
    ${error && view`<p class="field-error">${error}</p>`}
  </fieldset>`;
}

/**
 * @param {{ settings: Settings, probes: Probe[], onSaved: () => void }} props
 */
function SettingsForm({ settings, probes, onSaved }) {
  const form = useForm(["public", "title", "description", "show_urls", "probe_ids"]);
  const [values, setValues] = useState({
    public: settings.public,
    title: settings.title ?? "",
    description: settings.description ?? "",
    show_urls: settings.show_urls,
    /** @type {string[] | null} */
    probe_ids: settings.probe_ids,
  });
  const [saved, setSaved] = useState(false);
  /** @param {string} name */
  const set = (name) => (/** @type {unknown} */ value) => {
    setSaved(false);
    setValues((old) => ({ ...old, [name]: value }));
  };
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      await patch(`/projects/${seg(settings.project)}/status-page`, {
        public: values.public,
        title: values.title.trim() === "" ? null : values.title,
        description: values.description.trim() === "" ? null : values.description,
        show_urls: values.show_urls,
        probe_ids: values.probe_ids,
      });
      setSaved(true);
      onSaved();
    });
  };
  return view`<form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
    aria-labelledby="page-form-title">
    <h2 id="page-form-title">Settings</h2>
    <${FormError} message=${form.formError} />
    <${CheckField} name="public" label="Public" checked=${values.public}
      onChange=${set("public")} error=${form.errors.public}
      hint="Anyone with the link sees the page, without a key. Off: it answers 404." />
    <${TextField} idPrefix="page" name="title" label="Title" value=${values.title}
      onInput=${set("title")} error=${form.errors.title}
      hint="Up to 200 characters. Empty: the project's label, or its name." />
    <${TextField} idPrefix="page" name="description" label="Description" as="textarea" rows="3"
      value=${values.description} onInput=${set("description")} error=${form.errors.description}
      hint="A paragraph under the title, up to 2000 characters. The project's own description is not shown." />
    <${CheckField} name="show_urls" label="Show the probes' URLs" checked=${values.show_urls}
      onChange=${set("show_urls")} error=${form.errors.show_urls}
      hint="Without user names, passwords and query values. Off: probes are shown by label only." />
    <${ProbeChoice} probes=${probes} chosen=${values.probe_ids} onChange=${set("probe_ids")}
      error=${form.errors.probe_ids} />
    <div class="actions">
      <button type="submit" class="primary" disabled=${form.busy}>Save status page</button>
      <span role="status">${saved ? "Saved." : ""}</span>
    </div>
  </form>`;
}

/** @param {{ project: string }} props */
export function StatusPageSettings({ project }) {
  useTitle(`Status page of ${project}`);
  const canWrite = useCanWrite();
  const { data, error, loading, reload } = useLoad(
    () =>
      Promise.all([
        get(`/projects/${seg(project)}/status-page`),
        get(`/projects/${seg(project)}/probes`),
      ]),
    [project],
  );
  const settings = data?.[0].data;
  const probes = data?.[1].data ?? [];
  return view`<div>
    <${ProjectSettingsHead} project=${project} title="Status page" current="statusPage" />
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the status page settings" />`}
    ${
    settings && view`<section aria-labelledby="page-now-title">
      <h2 id="page-now-title">${settings.public ? "Public" : "Private"}</h2>
      <dl class="facts">
        <div><dt>Title</dt><dd>${
      settings.title ?? view`<span class="muted">the project's label or name</span>`
    }</dd></div>
        <div><dt>Description</dt><dd>${
      settings.description ?? view`<span class="muted">none</span>`
    }</dd></div>
        <div><dt>URLs</dt><dd>${settings.show_urls ? "shown" : "not shown"}</dd></div>
      </dl>
      <${PageLinks} settings=${settings} />
      <h2>Probes on the page</h2>
      <${PageProbes} probes=${probes} ids=${settings.probe_ids} showUrls=${settings.show_urls} />
    </section>`
  }
    ${
    settings && canWrite &&
    view`<${SettingsForm} settings=${settings} probes=${probes} onSaved=${reload} />`
  }
  </div>`;
}

/**
 * On a project's page: a link to its public status page when it is public, else to its
 * settings, saying it is private.
 * @param {{ project: string }} props
 */
export function StatusPageLink({ project }) {
  const { data } = useLoad(
    () => get(`/projects/${seg(project)}/status-page`),
    [project],
  );
  const settings = data?.data;
  if (!settings) return null;
  if (!settings.public) {
    return view`<p class="muted">Status page: private (<a href=${
      href.statusPage(project)
    }>settings</a>).</p>`;
  }
  return view`<p>Public status page: <a href=${settings.page_path}>${settings.page_path}</a>${" "}
    (<a href=${settings.json_path}>JSON</a>).</p>`;
}
