// @ts-check
/**
 * API keys (`/api-keys`, admins only): every key's record (the configured ones first, which the
 * environment changes, not this page), a key made here with its role, projects and expiry (the
 * key shown this once, with Copy), revoking one (it stops within a second everywhere), and when
 * each was last used.
 */
import { useState } from "preact/hooks";
import { view } from "./view.js";
import { del, get, post, seg } from "./api.js";
import { useLoad, useTitle } from "./load.js";
import { Ago, At, ConfirmButton, describe, ErrorNote, Loading, StatusNote } from "./parts.js";
import { FormError, namesOrNull } from "./forms.js";
import { CopyBox } from "./settings_parts.js";

/** @import { Answer } from "./api_types.d.ts" */
/** @import { ApiError } from "./api.js" */
/**
 * @typedef {NonNullable<Answer<"get", "/api-keys">>["data"][number]} ApiKey
 * @typedef {NonNullable<Answer<"post", "/api-keys">>["data"]} NewKey
 * @typedef {"viewer" | "editor" | "admin"} Role
 */

/** @type {[Role, string][]} */
const ROLES = [
  ["viewer", "Viewer: reads"],
  ["editor", "Editor: also changes projects, probes, heartbeats, …"],
  ["admin", "Admin: also keys, targets, settings, locations, backups"],
];

/**
 * The body of a new key from the form's fields: projects comma-separated (none: every project),
 * the expiry as the browser's local time (none: never).
 * @param {{ name: string, role: Role, projects: string, expires: string }} fields
 */
export function newKeyBody({ name, role, projects, expires }) {
  return {
    name: name.trim(),
    role,
    projects: namesOrNull(projects),
    expires_at: expires ? new Date(expires).toISOString() : null,
  };
}

export function KeysPage() {
  useTitle("API keys");
  const [round, setRound] = useState(0);
  const list = useLoad(() => get("/api-keys"), [], round);
  const [made, setMade] = useState(/** @type {NewKey | null} */ (null));
  const [message, setMessage] = useState("");
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const [fields, setFields] = useState({
    name: "",
    role: /** @type {Role} */ ("viewer"),
    projects: "",
    expires: "",
  });
  /** @param {keyof typeof fields} name */
  const field = (name) => (/** @type {Event} */ event) =>
    setFields({ ...fields, [name]: /** @type {HTMLInputElement} */ (event.target).value });
  /** @param {Event} event */
  const create = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await post("/api-keys", newKeyBody(fields));
      setMade(answer.data);
      setMessage(`Key ${answer.data.name} was created: copy it now, it is not shown again.`);
      setFields({ ...fields, name: "", projects: "", expires: "" });
      setRound(round + 1);
    } catch (failure) {
      setError(describe(/** @type {ApiError} */ (failure)));
    } finally {
      setBusy(false);
    }
  };
  /** @param {string} name */
  const revoke = async (name) => {
    try {
      await del(`/api-keys/${seg(name)}`);
      if (made?.name === name) setMade(null);
      setMessage(`Key ${name} was revoked: it no longer works.`);
    } catch (failure) {
      setMessage(`Could not revoke ${name}: ${describe(/** @type {ApiError} */ (failure))}`);
    }
    setRound(round + 1);
  };
  const keys = list.data?.data ?? [];
  return view`
    <div>
      <h1 tabindex="-1">API keys</h1>
      <p class="muted">
        Keys for people and scripts, each with a role and, if you like, limited to some projects.
        The keys from the environment (SERVICE_API_KEY, SERVICE_API_KEYS_READONLY) are listed
        first; they change with the environment (docs/access.md says how to rotate them).
      </p>
      <${StatusNote} message=${message} />
      ${
    made && view`
        <section class="notice token-once" aria-labelledby="new-key-title">
          <h2 id="new-key-title">The key of ${made.name}</h2>
          <p>Shown this once: the service keeps only its digest.</p>
          <${CopyBox} id="new-key" label="API key" text=${made.key} />
        </section>`
  }
      <form class="filters" onSubmit=${create} aria-label="New key">
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" name="name" required value=${fields.name}
            onInput=${field("name")} placeholder="ci-deploy" />
        </div>
        <div class="field">
          <label for="key-role">Role</label>
          <select id="key-role" name="role" value=${fields.role} onChange=${field("role")}>
            ${ROLES.map(([value, label]) => view`<option value=${value}>${label}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="key-projects">Projects</label>
          <input id="key-projects" name="projects" value=${fields.projects}
            onInput=${field("projects")} placeholder="all; or shop, blog" />
        </div>
        <div class="field">
          <label for="key-expires">Expires</label>
          <input id="key-expires" type="datetime-local" name="expires" value=${fields.expires}
            onInput=${field("expires")} />
        </div>
        <div class="field">
          <button type="submit" class="primary" disabled=${busy}>Create key</button>
        </div>
      </form>
      <${FormError} message=${error} />
      <${ErrorNote} error=${list.error}>Could not read the keys: <//>
      ${list.loading && !list.data && view`<${Loading} />`}
      ${
    keys.length > 0 && view`
        <div class="table-wrap">
        <table class="grid keys">
          <caption class="sr-only">API keys</caption>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Projects</th>
              <th scope="col">Created</th><th scope="col">Expires</th>
              <th scope="col">Last used</th><th scope="col">Actions</th></tr>
          </thead>
          <tbody>
            ${
      keys.map((k) =>
        view`<tr key=${k.name} data-key=${k.name}>
              <th scope="row" data-label="Name">${k.name}${
          k.configured && view` <span class="tag">configured</span>`
        }</th>
              <td data-label="Role">${k.role}</td>
              <td data-label="Projects">${k.projects ? k.projects.join(", ") : "all"}</td>
              <td data-label="Created">${
          k.created_at
            ? view`<${At} iso=${k.created_at} /> <span class="muted">${k.created_by}</span>`
            : "—"
        }</td>
              <td data-label="Expires">${
          k.expires_at ? view`<${At} iso=${k.expires_at} />` : "never"
        }</td>
              <td data-label="Last used">${
          k.configured ? "—" : k.last_used_at ? view`<${Ago} iso=${k.last_used_at} />` : "never"
        }</td>
              <td data-label="Actions">${
          !k.configured && view`<${ConfirmButton} label="Revoke" confirmLabel="Revoke"
                question=${`Revoke ${k.name}? It stops working at once.`}
                onConfirm=${() => revoke(k.name)} />`
        }</td>
            </tr>`
      )
    }
          </tbody>
        </table>
        </div>`
  }
    </div>
  `;
}
