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
        <section class="new-key" aria-label="The new key">
          <p>The key of <strong>${made.name}</strong>, shown this once:</p>
          <${CopyBox} id="new-key" label="API key" text=${made.key} />
        </section>`
  }
      <form class="filters" onSubmit=${create} aria-label="New key">
        <label>Name <input name="name" required value=${fields.name} onInput=${field("name")}
          placeholder="ci-deploy" /></label>
        <label>Role <select name="role" value=${fields.role} onChange=${field("role")}>
          ${ROLES.map(([value, label]) => view`<option value=${value}>${label}</option>`)}
        </select></label>
        <label>Projects <input name="projects" value=${fields.projects}
          onInput=${field("projects")} placeholder="all; or shop, blog" /></label>
        <label>Expires <input type="datetime-local" name="expires" value=${fields.expires}
          onInput=${field("expires")} /></label>
        <button type="submit" disabled=${busy}>Create key</button>
      </form>
      <${FormError} message=${error} />
      <${ErrorNote} error=${list.error}>Could not read the keys: <//>
      ${list.loading && !list.data && view`<${Loading} />`}
      ${
    keys.length > 0 && view`
        <table class="keys">
          <thead>
            <tr><th>Name</th><th>Role</th><th>Projects</th><th>Created</th><th>Expires</th>
              <th>Last used</th><th></th></tr>
          </thead>
          <tbody>
            ${
      keys.map((k) =>
        view`<tr key=${k.name}>
              <td>${k.name}${k.configured && view` <span class="muted">configured</span>`}</td>
              <td>${k.role}</td>
              <td>${k.projects ? k.projects.join(", ") : "all"}</td>
              <td>${
          k.created_at
            ? view`<${At} iso=${k.created_at} /> <span class="muted">${k.created_by}</span>`
            : "—"
        }</td>
              <td>${k.expires_at ? view`<${At} iso=${k.expires_at} />` : "never"}</td>
              <td>${
          k.configured ? "—" : k.last_used_at ? view`<${Ago} iso=${k.last_used_at} />` : "never"
        }</td>
              <td>${
          !k.configured && view`<${ConfirmButton} label="Revoke" confirmLabel="Revoke"
                question=${`Revoke ${k.name}? It stops working at once.`}
                onConfirm=${() => revoke(k.name)} />`
        }</td>
            </tr>`
      )
    }
          </tbody>
        </table>`
  }
    </div>
  `;
}
