// @ts-check
/** A project's page (its probes, edit, enable or disable, delete) and the new-project form. */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { useCanWrite } from "./scope.js";
import { del, get, patch, post, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href, navigate } from "./routes.js";
import { ConfirmButton, describe, ErrorNote, Loading } from "./parts.js";
import { Field, FormError, namesOrNull, useForm } from "./forms.js";
import { ProbeTable, tally } from "./overview.js";
import { useNotice } from "./notice.js";
import { ProjectNav } from "./settings_parts.js";
import { StatusPageLink } from "./status_page_settings.js";
import { heartbeatOfUrl, ProjectHeartbeats } from "./heartbeats.js";
/** @import { ApiError } from "./api.js" */
/** @import { Project, ProjectCreate } from "./api_types.d.ts" */

const orNull = (/** @type {string} */ text) => (text.trim() === "" ? null : text);

export function NewProject() {
  useTitle("New project");
  const fields = ["project", "label", "description"];
  const form = useForm(fields);
  const notice = useNotice();
  const [values, setValues] = useState({ project: "", label: "", description: "" });
  /** @param {keyof typeof values} name */
  const set = (name) => (/** @type {string} */ value) =>
    setValues((v) => ({ ...v, [name]: value }));
  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    form.submit(async () => {
      /** @type {ProjectCreate} */
      const body = { project: values.project };
      if (values.label.trim()) body.label = values.label;
      if (values.description.trim()) body.description = values.description;
      try {
        await post("/projects", body);
      } catch (thrown) {
        const error = /** @type {ApiError} */ (thrown);
        // A name taken is the name's problem: said beside it.
        if (error.code === "conflict") {
          error.details = [{ path: "project", message: error.message }];
        }
        throw error;
      }
      notice(`Project ${values.project} was created.`);
      navigate(href.project(values.project));
    });
  };
  return view`
    <div>
      <div class="page-head">
        <h1 tabindex="-1">New project</h1>
      </div>
      <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate>
        <${FormError} message=${form.formError} />
        <${Field} name="project" label="Name" value=${values.project} onInput=${set("project")}
          error=${form.errors.project} autocomplete="off"
          hint="Letters, digits, '.', '_' and '-', starting with a letter or digit; it cannot be changed later." />
        <${Field} name="label" label="Label (optional)" value=${values.label}
          onInput=${set("label")} error=${form.errors.label} />
        <${Field} name="description" label="Description (optional)" as="textarea" rows="3"
          value=${values.description} onInput=${
    set("description")
  } error=${form.errors.description} />
        <div class="actions">
          <button type="submit" class="primary" disabled=${form.busy}>Create project</button>
          <a class="button" href=${href.overview()}>Cancel</a>
        </div>
      </form>
    </div>
  `;
}

/** @param {{ project: Project, onSaved: () => void }} props */
function EditProject({ project, onSaved }) {
  const fields = ["label", "description", "default_locations"];
  const form = useForm(fields);
  const [values, setValues] = useState({
    label: project.label ?? "",
    description: project.description ?? "",
    default_locations: (project.default_locations ?? []).join(", "),
  });
  const [saved, setSaved] = useState(false);
  /** @param {keyof typeof values} name */
  const set = (name) => (/** @type {string} */ value) => {
    setSaved(false);
    setValues((v) => ({ ...v, [name]: value }));
  };
  /** @param {SubmitEvent} event */
  const onSubmit = (event) => {
    event.preventDefault();
    form.submit(async () => {
      await patch(`/projects/${seg(project.project)}`, {
        label: orNull(values.label),
        description: orNull(values.description),
        default_locations: namesOrNull(values.default_locations),
      });
      setSaved(true);
      onSaved();
    });
  };
  return view`
    <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
      aria-labelledby="edit-project-title">
      <h2 id="edit-project-title">Edit project</h2>
      <${FormError} message=${form.formError} />
      <${Field} name="label" label="Label" value=${values.label} onInput=${set("label")}
        error=${form.errors.label} hint="Empty clears it." />
      <${Field} name="description" label="Description" as="textarea" rows="3"
        value=${values.description} onInput=${
    set("description")
  } error=${form.errors.description} />
      <${Field} name="default_locations" label="Default locations" autocomplete="off"
        value=${values.default_locations} onInput=${set("default_locations")}
        error=${form.errors.default_locations}
        hint="Where its probes without their own locations run: names, comma-separated (see Locations). Empty: the built-in location." />
      <div class="actions">
        <button type="submit" class="primary" disabled=${form.busy}>Save changes</button>
        <span role="status">${saved ? "Saved." : ""}</span>
      </div>
    </form>
  `;
}

/** @param {{ project: Project, onDone: () => void }} props */
function StatusToggle({ project, onDone }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const next = project.status === "enabled" ? "disabled" : "enabled";
  const toggle = async () => {
    setBusy(true);
    setError(null);
    try {
      await patch(`/projects/${seg(project.project)}`, { status: next });
      onDone();
    } catch (e) {
      setError(/** @type {ApiError} */ (e));
    } finally {
      setBusy(false);
    }
  };
  return view`<button type="button" disabled=${busy} onClick=${toggle}>
      ${next === "disabled" ? "Disable project" : "Enable project"}
    </button>
    ${error && view`<span class="error" role="alert">${describe(error)}</span>`}`;
}

/** @param {{ name: string }} props */
export function ProjectPage({ name }) {
  const notice = useNotice();
  const canWrite = useCanWrite();
  const { data, error, loading, reload } = useLoad(
    () =>
      Promise.all([
        get(`/projects/${seg(name)}`),
        get(`/overview?project=${seg(name)}`),
      ]),
    [name],
  );
  const project = data?.[0].data;
  useTitle(project ? project.label ?? project.project : name);
  // Heartbeats have a section of their own below, though the overview lists them with probes.
  const probes = (data?.[1].data.projects.find((p) => p.project === name)?.probes ?? [])
    .filter((p) => heartbeatOfUrl(p.url) === null);
  const counts = tally(probes);
  const remove = async () => {
    const answer = await del(`/projects/${seg(name)}`);
    notice(answer?.meta?.message ?? `Project ${name} was deleted.`);
    navigate(href.overview());
  };
  return view`<div>
    <p class="crumbs"><a href=${href.overview()}>Overview</a> › ${name}</p>
    <div class="page-head">
      <h1 tabindex="-1">${project?.label ?? name}</h1>
      ${project?.status === "disabled" && view`<span class="tag">disabled</span>`}
    </div>
    <${ProjectNav} project=${name} current="project" />
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the project" />`}
    ${
    project && view`
      <p class="muted">Project <code>${project.project}</code>; ${
      project.status === "enabled" ? "enabled: its probes run." : "disabled: its probes do not run."
    }</p>
      ${project.description && view`<p>${project.description}</p>`}
      <${StatusPageLink} project=${name} />
      ${
      canWrite && view`<div class="actions">
        <a class="button primary" href=${href.newProbe(name)}>Add probe</a>
        <${StatusToggle} project=${project} onDone=${reload} />
        <${ConfirmButton} label="Delete project" confirmLabel="Delete project and its probes"
          question=${`Delete ${name} and all its probes? It is archived first.`} onConfirm=${remove} />
      </div>`
    }
      <section aria-labelledby="probes-title">
        <h2 id="probes-title">Probes (${probes.length})</h2>
        ${
      probes.length === 0 ? view`<p class="muted">No probes yet.</p>` : view`
          <p class="muted">${
        Object.entries(counts).filter(([, n]) => n).map(([s, n]) => `${n} ${s}`).join(" · ")
      }</p>
          <${ProbeTable} project=${name} probes=${probes} caption=${`Probes of ${name}`} />
        `
    }
      </section>
      <${ProjectHeartbeats} project=${name} canWrite=${canWrite} round=${0} />
      ${canWrite && view`<${EditProject} key=${name} project=${project} onSaved=${reload} />`}
    `
  }
  </div>`;
}
