// @ts-check
/**
 * Notification targets (`/notification-targets`): where alerts go. Each is listed with what the
 * API shows of it (secrets masked: a webhook's signing key as `whsec_…`, a Slack or Discord URL as
 * its host), with a test send and its outcome, an edit form and a delete that asks again. A new
 * target is made for each kind; a webhook's generated signing key is shown once, to copy.
 * A read-only key sees the list only.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { useAbilities } from "./scope.js";
import { ApiError, del, get, patch, post, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { href } from "./routes.js";
import { At, ConfirmButton, ErrorNote, Loading, StatusNote } from "./parts.js";
import { FieldError, FormError, useForm } from "./forms.js";
import { ActionOutcome, conflictText, CopyBox, TextField, useAction } from "./settings_parts.js";
import { plural } from "./format.js";

/** @import { Answer, Body } from "./api_types.d.ts" */
/**
 * @typedef {NonNullable<Answer<"get", "/notification-targets">>["data"][number]} Target
 * @typedef {NonNullable<Answer<"post", "/notification-targets/{name}/test">>["data"]} TestOutcome
 * @typedef {NonNullable<Answer<"get", "/notification-target-kinds">>["data"][number]} Kind
 * @typedef {Kind["fields"][number]} KindField
 * @typedef {Body<"post", "/notification-targets">} NewTargetBody
 * @typedef {Body<"patch", "/notification-targets/{name}">} TargetChange
 */

/** A target's settings as read, by field name. */
const settingOf = (/** @type {Target} */ target, /** @type {string} */ name) =>
  /** @type {Record<string, unknown>} */ (target)[name];

/** A field's label without its parenthesis: `Signing key (whsec_…)` reads `Signing key`. */
const shortLabel = (/** @type {KindField} */ field) => field.label.replace(/\s*\(.*\)$/, "");

/** Mail addresses typed one per line (or separated by commas). */
const splitRecipients = (/** @type {string} */ text) =>
  text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);

/** @param {TestOutcome} result */
function testText(result) {
  const attempts = plural(result.attempts, "attempt");
  if (result.outcome === "delivered") return `Test delivered to ${result.target} (${attempts}).`;
  const why = result.error ? `: ${result.error}` : "";
  if (result.outcome === "not_configured") return `Test to ${result.target} not sent${why}.`;
  return `Test to ${result.target} failed (${attempts})${why}.`;
}

/**
 * The test send of one target and what came of it.
 * @param {{ target: Target }} props
 */
function TestButton({ target }) {
  /** @type {import("./settings_parts.js").Action<TestOutcome>} */
  const test = useAction();
  const send = () =>
    test.run(async () => (await post(`/notification-targets/${seg(target.name)}/test`)).data);
  const failed = test.result && test.result.outcome !== "delivered";
  return view`<div class="target-test">
    <button type="button" disabled=${test.busy} onClick=${send}
      aria-label=${`Send test to ${target.name}`}>${test.busy ? "Sending…" : "Send test"}</button>
    ${
    test.error ? view`<${ActionOutcome} error=${test.error} />` : view`<p role="status"
      class=${failed ? "outcome error" : "outcome"}>${test.result ? testText(test.result) : ""}</p>`
  }
  </div>`;
}

/**
 * What a target is, as the API shows it: each field of its kind, secrets masked.
 * @param {{ target: Target, kind: Kind | undefined }} props
 */
function TargetFacts({ target, kind }) {
  const fields = (kind?.fields ?? []).map((field) => {
    const value = settingOf(target, field.name);
    if (field.input === "emails") {
      return Array.isArray(value) &&
        view`<div key=${field.name}><dt>${shortLabel(field)}</dt><dd>${
          value.join(", ")
        }</dd></div>`;
    }
    if (field.secret && field.name !== "url" || value) {
      return view`<div key=${field.name}><dt>${shortLabel(field)}</dt><dd><code>${
        typeof value === "string" ? value : "—"
      }</code></dd></div>`;
    }
    return null;
  });
  return view`<dl class="facts">
    ${fields}
    ${
    target.kind === "log" &&
    view`<div><dt>Sends</dt><dd>One JSON line on the server's standard output</dd></div>`
  }
    ${
    target.created_at &&
    view`<div><dt>Created</dt><dd><${At} iso=${target.created_at} /></dd></div>`
  }
    ${
    target.updated_at &&
    view`<div><dt>Changed</dt><dd><${At} iso=${target.updated_at} /></dd></div>`
  }
  </dl>`;
}

/**
 * The fields a kind has, for a new target or an edit of one, as the kinds document describes
 * them: a secret is typed into a password field unless it is a URL, and on an edit it is left
 * empty to keep it.
 * @param {{
 *   idPrefix: string,
 *   kind: Kind,
 *   values: Record<string, string>,
 *   set: (name: string) => (value: string) => void,
 *   errors: Record<string, string>,
 *   editing?: Target,
 * }} props
 */
function KindFields({ idPrefix, kind, values, set, errors, editing }) {
  return kind.fields.map((field) => {
    const common = {
      key: field.name,
      idPrefix,
      name: field.name,
      label: field.label,
      value: values[field.name] ?? "",
      onInput: set(field.name),
      error: errors[field.name],
      autocomplete: "off",
      spellcheck: false,
    };
    if (field.input === "emails") {
      return view`<${TextField} ...${common} as="textarea" rows="3" hint=${field.help ?? ""} />`;
    }
    const shown = editing && settingOf(editing, field.name);
    const keep = !editing || !field.secret
      ? ""
      : field.input === "url" && typeof shown === "string"
      ? ` Now ${shown}; leave empty to keep it.`
      : " Leave empty to keep the current one; a new one replaces it.";
    return view`<${TextField} ...${common} type=${field.input === "secret" ? "password" : "text"}
      hint=${`${field.help ?? ""}${keep}`.trim()} />`;
  });
}

/** Mail addresses typed one per line (or separated by commas), the other fields trimmed. */
function valueOf(/** @type {KindField} */ field, /** @type {string} */ text) {
  return field.input === "emails" ? splitRecipients(text) : text.trim();
}

/** What a form shows at first: the readable settings of a target being edited, else nothing. */
function initialValues(/** @type {Kind} */ kind, /** @type {Target | undefined} */ target) {
  /** @type {Record<string, string>} */
  const values = {};
  for (const field of kind.fields) {
    const value = target && !field.secret ? settingOf(target, field.name) : undefined;
    values[field.name] = Array.isArray(value)
      ? value.join("\n")
      : typeof value === "string"
      ? value
      : "";
  }
  return values;
}

/**
 * The form that changes a target: only the fields changed (or, for a secret, filled in) are sent.
 * @param {{
 *   target: Target,
 *   kind: Kind,
 *   onDone: (message: string) => void,
 *   onCancel: () => void,
 * }} props
 */
function EditTarget({ target, kind, onDone, onCancel }) {
  const form = useForm(kind.fields.map((f) => f.name));
  const [values, setValues] = useState(() => initialValues(kind, target));
  const set = (/** @type {string} */ name) => (/** @type {string} */ v) =>
    setValues((old) => ({ ...old, [name]: v }));
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      const before = initialValues(kind, target);
      /** @type {Record<string, unknown>} */
      const body = {};
      for (const field of kind.fields) {
        const text = values[field.name] ?? "";
        if (!text.trim() || text === before[field.name]) continue;
        body[field.name] = valueOf(field, text);
      }
      if (Object.keys(body).length === 0) {
        throw new FieldError({ [kind.fields[0]?.name ?? "name"]: "Nothing was changed" });
      }
      await patch(`/notification-targets/${seg(target.name)}`, /** @type {TargetChange} */ (body));
      onDone(`Target ${target.name} was saved.`);
    });
  };
  const idPrefix = `edit-${target.name}`;
  return view`<form class="form inline-form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
    aria-label=${`Edit ${target.name}`}>
    <${FormError} message=${form.formError} />
    <${KindFields} idPrefix=${idPrefix} kind=${kind} values=${values} set=${set}
      errors=${form.errors} editing=${target} />
    <div class="actions">
      <button type="submit" class="primary" disabled=${form.busy}>Save ${target.name}</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`;
}

/**
 * One target: what it is, and for a key that may write, test, edit and delete.
 * @param {{ target: Target, kind: Kind | undefined, onChanged: (message: string) => void }} props
 */
function TargetCard({ target, kind, onChanged }) {
  const canAdminister = useAbilities().administer;
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState(/** @type {ApiError | null} */ (null));
  const builtIn = target.kind === "log";
  const remove = async () => {
    setError(null);
    try {
      await del(`/notification-targets/${seg(target.name)}`);
      onChanged(`Target ${target.name} was deleted.`);
    } catch (e) {
      setError(/** @type {ApiError} */ (e));
    }
  };
  const headingId = `target-${target.name}`;
  return view`<li class="card" aria-labelledby=${headingId}>
    <div class="card-head">
      <h3 id=${headingId}>${target.name}</h3>
      <span class="tag">${builtIn ? "built in" : target.kind}</span>
    </div>
    <${TargetFacts} target=${target} kind=${kind} />
    ${
    canAdminister && view`<div class="actions">
      <${TestButton} target=${target} />
      ${
      !builtIn && kind && !editing && view`<button type="button" onClick=${() => setEditing(true)}
        aria-label=${`Edit ${target.name}`}>Edit</button>`
    }
      ${
      !builtIn && view`<${ConfirmButton} label="Delete" confirmLabel=${`Delete ${target.name}`}
        question=${`Delete the target ${target.name}?`} onConfirm=${remove} />`
    }
    </div>`
  }
    ${error && view`<p class="error" role="alert">${conflictText(error)}</p>`}
    ${
    editing && kind && view`<${EditTarget} target=${target} kind=${kind} onCancel=${() =>
      setEditing(false)}
      onDone=${(/** @type {string} */ m) => {
      setEditing(false);
      onChanged(m);
    }} />`
  }
  </li>`;
}

/**
 * A new target of any kind the service has. A field the service generates when it is left empty
 * (a webhook's signing key) is shown here once.
 * @param {{ kinds: Kind[], onCreated: (message: string) => void }} props
 */
function NewTarget({ kinds, onCreated }) {
  const form = useForm([
    "name",
    "kind",
    ...new Set(kinds.flatMap((k) => k.fields.map((f) => f.name))),
  ]);
  const [kindName, setKind] = useState(kinds[0]?.kind ?? "");
  const kind = kinds.find((k) => k.kind === kindName) ?? kinds[0];
  const [name, setName] = useState("");
  const [values, setValues] = useState(/** @type {Record<string, string>} */ ({}));
  const [generated, setGenerated] = useState(
    /** @type {{ target: string, field: KindField, value: string } | null} */ (null),
  );
  const keyBox = useRef(/** @type {HTMLDivElement | null} */ (null));
  // The generated value is what must be done next: focus (and so scroll) to it.
  useEffect(() => {
    if (generated) keyBox.current?.focus();
  }, [generated]);
  const set = (/** @type {string} */ field) => (/** @type {string} */ v) =>
    setValues((old) => ({ ...old, [field]: v }));
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    setGenerated(null);
    form.submit(async () => {
      /** @type {Record<string, unknown>} */
      const body = { name: name.trim(), kind: kind.kind };
      for (const field of kind.fields) {
        const text = values[field.name] ?? "";
        // A required field is sent empty rather than left out: the API names it.
        if (text.trim() || field.required) body[field.name] = valueOf(field, text);
      }
      try {
        const answer = await post("/notification-targets", /** @type {NewTargetBody} */ (body));
        const made = kind.fields.find((f) => f.generated && body[f.name] === undefined);
        const value = made && settingOf(answer.data, made.name);
        if (made && typeof value === "string") {
          setGenerated({ target: answer.data.name, field: made, value });
        }
      } catch (error) {
        if (error instanceof ApiError && error.code === "conflict") {
          error.details = [{ path: "name", message: "is taken already" }];
        }
        throw error;
      }
      setName("");
      setValues({});
      onCreated(`Target ${body.name} was added.`);
    });
  };
  const what = generated && shortLabel(generated.field).toLowerCase();
  return view`<section aria-labelledby="new-target-title">
    <h2 id="new-target-title">Add a target</h2>
    ${
    generated && view`<div class="notice secret-once" tabindex="-1" ref=${keyBox}
      role="group" aria-label=${`${shortLabel(generated.field)} of ${generated.target}`}>
      <p><strong>The ${what} of ${generated.target}</strong> is shown this once: keep it where
        the receiver needs it. Afterwards it is shown masked; to replace it, edit the
        target.</p>
      <${CopyBox} id="generated-secret" label=${what} text=${generated.value} />
    </div>`
  }
    <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
      aria-labelledby="new-target-title">
      <${FormError} message=${form.formError} />
      <fieldset class="choices kinds" aria-describedby="kind-hint">
        <legend>Kind</legend>
        ${
    kinds.map((k) =>
      view`<label class="choice" key=${k.kind}>
            <input type="radio" name="kind" value=${k.kind} checked=${kind === k}
              onChange=${() => setKind(k.kind)} />
            ${k.label}
          </label>`
    )
  }
      </fieldset>
      <p class="hint" id="kind-hint">${kind?.description ?? kind?.label}.</p>
      <${TextField} idPrefix="new-target" name="name" label="Name" value=${name}
        onInput=${setName} error=${form.errors.name} autocomplete="off" spellcheck=${false}
        hint="How the alert policy names it: letters, digits, '.', '_' and '-', a letter or digit first. log, mail and webhook are reserved." />
      ${
    kind && view`<${KindFields} idPrefix="new-target" kind=${kind} values=${values} set=${set}
        errors=${form.errors} />`
  }
      <div class="actions">
        <button type="submit" class="primary" disabled=${form.busy}>Add target</button>
      </div>
    </form>
  </section>`;
}

export function TargetsPage() {
  useTitle("Notification targets");
  const canAdminister = useAbilities().administer;
  const [message, setMessage] = useState("");
  const { data, error, loading, reload } = useLoad(
    () => get("/notification-targets"),
    [],
  );
  // What each kind has: the forms and facts follow it, so a new kind needs nothing here.
  const kindsLoad = useLoad(() => get("/notification-target-kinds"), []);
  /** @type {Target[]} */
  const targets = data?.data ?? [];
  /** @type {Kind[]} */
  const kinds = kindsLoad.data?.data ?? [];
  const kindOf = (/** @type {Target} */ t) => kinds.find((k) => k.kind === t.kind);
  const changed = (/** @type {string} */ text) => {
    setMessage(text);
    reload();
  };
  return view`<div>
    <div class="page-head">
      <h1 tabindex="-1">Notification targets</h1>
    </div>
    <p class="muted">Where alerts go: a probe down, recovered, degraded, or still down. The${" "}
      <a href=${href.alertPolicy()}>alert policy</a> and each project's alert settings name the
      targets that receive them. Secrets are shown masked.</p>
    <${StatusNote} message=${message} />
    <${ErrorNote} error=${error ?? kindsLoad.error} />
    ${!data && loading && view`<${Loading} what="Loading the targets" />`}
    ${
    data && view`<section aria-labelledby="targets-title">
      <h2 id="targets-title">Targets (${targets.length})</h2>
      <ul class="cards">
        ${
      targets.map((t) =>
        view`<${TargetCard} key=${t.name} target=${t} kind=${kindOf(t)} onChanged=${changed} />`
      )
    }
      </ul>
    </section>`
  }
    ${
    canAdminister && kinds.length > 0 && view`<${NewTarget} kinds=${kinds} onCreated=${changed} />`
  }
  </div>`;
}
