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
import { useCanWrite } from "./scope.js";
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
 * @typedef {"webhook" | "slack" | "discord" | "mail"} Kind
 * @typedef {Body<"post", "/notification-targets">} NewTargetBody
 * @typedef {Body<"patch", "/notification-targets/{name}">} TargetChange
 */

/** @type {[Kind, string, string][]} */
const KINDS = [
  ["webhook", "Webhook", "The event as signed JSON (Standard Webhooks)"],
  ["slack", "Slack", "A Slack incoming webhook"],
  ["discord", "Discord", "A Discord webhook"],
  [
    "mail",
    "Mail",
    "Plain-text mail through the server's SMTP_URL, from MAIL_FROM (both must be set)",
  ],
];

/** @type {Record<Kind, string>} */
const URL_HINTS = {
  webhook: "An http:// or https:// address that receives a POST of each event. No user name or " +
    "password in it.",
  slack: "The incoming webhook URL from Slack (https://hooks.slack.com/services/…). It is the " +
    "credential: after saving, only its host is shown.",
  discord: "The webhook URL from Discord (https://discord.com/api/webhooks/…). It is the " +
    "credential: after saving, only its host is shown.",
  mail: "",
};

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
 * What a target is, as the API shows it.
 * @param {{ target: Target }} props
 */
function TargetFacts({ target }) {
  const url = target.url && view`<div><dt>URL</dt><dd><code>${target.url}</code></dd></div>`;
  return view`<dl class="facts">
    ${url}
    ${
    target.recipients &&
    view`<div><dt>Recipients</dt><dd>${target.recipients.join(", ")}</dd></div>`
  }
    ${
    target.kind === "webhook" &&
    view`<div><dt>Signing key</dt><dd><code>${target.secret ?? "—"}</code></dd></div>`
  }
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
 * The fields a kind has, for a new target or an edit of one.
 * @param {{
 *   idPrefix: string,
 *   kind: Kind,
 *   values: { url: string, secret: string, recipients: string },
 *   set: (name: "url" | "secret" | "recipients") => (value: string) => void,
 *   errors: Record<string, string>,
 *   editing?: Target,
 * }} props
 */
function KindFields({ idPrefix, kind, values, set, errors, editing }) {
  if (kind === "mail") {
    return view`<${TextField} idPrefix=${idPrefix} name="recipients" label="Recipients"
      as="textarea" rows="3" value=${values.recipients} onInput=${set("recipients")}
      error=${errors.recipients} autocomplete="off" spellcheck=${false}
      hint="One mail address per line, 1 to 20." />`;
  }
  const keepUrl = editing && editing.url && kind !== "webhook"
    ? ` Now ${editing.url}; leave empty to keep it.`
    : "";
  const keepSecret = editing
    ? "Leave empty to keep the current key; a new one replaces it."
    : "Optional: leave empty and the service makes one, shown to you once.";
  return view`
    <${TextField} idPrefix=${idPrefix} name="url" label="URL" value=${values.url}
      onInput=${set("url")} error=${errors.url} autocomplete="off" spellcheck=${false}
      hint=${URL_HINTS[kind] + keepUrl} />
    ${
    kind === "webhook" && view`<${TextField} idPrefix=${idPrefix} name="secret"
      label="Signing key (whsec_…)" type="password" value=${values.secret}
      onInput=${set("secret")} error=${errors.secret} autocomplete="off" spellcheck=${false}
      hint=${`A Standard Webhooks key: whsec_ and base64 of 24 to 64 bytes. ${keepSecret}`} />`
  }
  `;
}

/**
 * The form that changes a target: only the fields filled in are sent.
 * @param {{ target: Target, onDone: (message: string) => void, onCancel: () => void }} props
 */
function EditTarget({ target, onDone, onCancel }) {
  const kind = /** @type {Kind} */ (target.kind);
  const form = useForm(["url", "secret", "recipients"]);
  const [values, setValues] = useState({
    url: kind === "webhook" ? target.url ?? "" : "",
    secret: "",
    recipients: (target.recipients ?? []).join("\n"),
  });
  const set = (/** @type {"url" | "secret" | "recipients"} */ name) => (/** @type {string} */ v) =>
    setValues((old) => ({ ...old, [name]: v }));
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    form.submit(async () => {
      /** @type {TargetChange} */
      const body = {};
      if (kind === "mail") body.recipients = splitRecipients(values.recipients);
      else {
        if (values.url.trim() && values.url !== target.url) body.url = values.url.trim();
        if (kind === "webhook" && values.secret.trim()) body.secret = values.secret.trim();
      }
      if (Object.keys(body).length === 0) {
        throw new FieldError({ [kind === "mail" ? "recipients" : "url"]: "Nothing was changed" });
      }
      await patch(`/notification-targets/${seg(target.name)}`, body);
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
 * @param {{ target: Target, onChanged: (message: string) => void }} props
 */
function TargetCard({ target, onChanged }) {
  const canWrite = useCanWrite();
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
    <${TargetFacts} target=${target} />
    ${
    canWrite && view`<div class="actions">
      <${TestButton} target=${target} />
      ${
      !builtIn && !editing && view`<button type="button" onClick=${() => setEditing(true)}
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
    editing && view`<${EditTarget} target=${target} onCancel=${() => setEditing(false)}
      onDone=${(/** @type {string} */ m) => {
      setEditing(false);
      onChanged(m);
    }} />`
  }
  </li>`;
}

/**
 * A new target of any kind. A webhook made without a key gets one from the service, shown here
 * once.
 * @param {{ onCreated: (message: string) => void }} props
 */
function NewTarget({ onCreated }) {
  const form = useForm(["name", "kind", "url", "secret", "recipients"]);
  const [kind, setKind] = useState(/** @type {Kind} */ ("webhook"));
  const [name, setName] = useState("");
  const [values, setValues] = useState({ url: "", secret: "", recipients: "" });
  const [generated, setGenerated] = useState(/** @type {Target | null} */ (null));
  const keyBox = useRef(/** @type {HTMLDivElement | null} */ (null));
  // The generated key is what must be done next: focus (and so scroll) to it.
  useEffect(() => {
    if (generated) keyBox.current?.focus();
  }, [generated]);
  const set = (/** @type {"url" | "secret" | "recipients"} */ field) => (/** @type {string} */ v) =>
    setValues((old) => ({ ...old, [field]: v }));
  const onSubmit = (/** @type {Event} */ event) => {
    event.preventDefault();
    setGenerated(null);
    form.submit(async () => {
      /** @type {NewTargetBody} */
      const body = { name: name.trim(), kind };
      if (kind === "mail") body.recipients = splitRecipients(values.recipients);
      else body.url = values.url.trim();
      if (kind === "webhook" && values.secret.trim()) body.secret = values.secret.trim();
      try {
        const answer = await post("/notification-targets", body);
        if (kind === "webhook" && !body.secret) setGenerated(answer.data);
      } catch (error) {
        if (error instanceof ApiError && error.code === "conflict") {
          error.details = [{ path: "name", message: "is taken already" }];
        }
        throw error;
      }
      setName("");
      setValues({ url: "", secret: "", recipients: "" });
      onCreated(`Target ${body.name} was added.`);
    });
  };
  return view`<section aria-labelledby="new-target-title">
    <h2 id="new-target-title">Add a target</h2>
    ${
    generated && view`<div class="notice secret-once" tabindex="-1" ref=${keyBox}
      role="group" aria-label=${`Signing key of ${generated.name}`}>
      <p><strong>The signing key of ${generated.name}</strong> is shown this once: keep it where
        the receiver verifies signatures. Afterwards it is shown masked; to replace it, edit the
        target.</p>
      <${CopyBox} id="generated-secret" label="signing key" text=${generated.secret ?? ""} />
    </div>`
  }
    <form class="form" ref=${form.formRef} onSubmit=${onSubmit} novalidate
      aria-labelledby="new-target-title">
      <${FormError} message=${form.formError} />
      <fieldset class="choices kinds" aria-describedby="kind-hint">
        <legend>Kind</legend>
        ${
    KINDS.map(([value, text]) =>
      view`<label class="choice" key=${value}>
            <input type="radio" name="kind" value=${value} checked=${kind === value}
              onChange=${() => setKind(value)} />
            ${text}
          </label>`
    )
  }
      </fieldset>
      <p class="hint" id="kind-hint">${KINDS.find(([k]) => k === kind)?.[2]}.</p>
      <${TextField} idPrefix="new-target" name="name" label="Name" value=${name}
        onInput=${setName} error=${form.errors.name} autocomplete="off" spellcheck=${false}
        hint="How the alert policy names it: letters, digits, '.', '_' and '-', a letter or digit first. log, mail and webhook are reserved." />
      <${KindFields} idPrefix="new-target" kind=${kind} values=${values} set=${set}
        errors=${form.errors} />
      <div class="actions">
        <button type="submit" class="primary" disabled=${form.busy}>Add target</button>
      </div>
    </form>
  </section>`;
}

export function TargetsPage() {
  useTitle("Notification targets");
  const canWrite = useCanWrite();
  const [message, setMessage] = useState("");
  const { data, error, loading, reload } = useLoad(
    () => get("/notification-targets"),
    [],
  );
  /** @type {Target[]} */
  const targets = data?.data ?? [];
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
    <${ErrorNote} error=${error} />
    ${!data && loading && view`<${Loading} what="Loading the targets" />`}
    ${
    data && view`<section aria-labelledby="targets-title">
      <h2 id="targets-title">Targets (${targets.length})</h2>
      <ul class="cards">
        ${
      targets.map((t) => view`<${TargetCard} key=${t.name} target=${t} onChanged=${changed} />`)
    }
      </ul>
    </section>`
  }
    ${canWrite && view`<${NewTarget} onCreated=${changed} />`}
  </div>`;
}
