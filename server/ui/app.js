// @ts-check
/**
 * The dashboard's entry: sign-in (with an API key, or single sign-on when the service offers it),
 * which gives a session the service keeps and an HttpOnly cookie (the key is not kept in the
 * browser), then the page the URL's fragment names. Every call goes to the REST API with the
 * cookie; a 401 from any of them (the session ended) signs out with a message. A viewer sees
 * every page without the controls that would change something.
 */
import { render } from "preact";
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { view } from "./view.js";
import { forgetPrefetched, onUnauthorized, scopeOf, sessionState, signIn, signOut } from "./api.js";
import { href, useRoute } from "./routes.js";
import { useTitle } from "./load.js";
import { NoticeContext } from "./notice.js";
import { abilities, AccessContext, useAbilities } from "./scope.js";
import { Overview } from "./overview.js";
import { NewProject, ProjectPage } from "./project.js";
import { EditProbe, NewProbe } from "./probe_form.js";
import { ProbePage } from "./probe.js";
import { IncidentsPage } from "./incidents_page.js";
import { TargetsPage } from "./targets.js";
import { AlertPolicyPage, ProjectAlertsPage } from "./policy.js";
import { SettingsPage } from "./settings_page.js";
import { MaintenancePage } from "./maintenance.js";
import { StatusPageSettings } from "./status_page_settings.js";
import { BadgesPage } from "./badges.js";
import { EditHeartbeat, NewHeartbeat } from "./heartbeat_form.js";
import { HeartbeatPage } from "./heartbeat_page.js";
/** @import { ApiError, Scope, Session, SessionState } from "./api.js" */
/** @import { Route } from "./routes.js" */
import { LocationsPage } from "./locations.js";
import { AuditPage } from "./audit.js";
import { KeysPage } from "./keys.js";

/** @param {ApiError} error */
function refusal(error) {
  if (error.status === 401) {
    return "This key was refused (401 unauthorized). Check it and try again.";
  }
  if (error.status === 429) {
    const wait = error.retryAfter ? ` in ${error.retryAfter} s` : " later";
    return `Too many failed attempts from this address (429). Try again${wait}.`;
  }
  return `Could not sign in: ${error.message}${error.status ? ` [${error.status}]` : ""}.`;
}

/**
 * @param {{ onSignedIn: (session: Session) => void, message: string | null,
 *   oidc: SessionState["oidc"] }} props
 */
function SignIn({ onSignedIn, message, oidc }) {
  useTitle("Sign in");
  const [key, setKey] = useState("");
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const input = useRef(/** @type {HTMLInputElement | null} */ (null));
  useEffect(() => input.current?.focus(), []);
  /** @param {{ currentTarget: HTMLInputElement }} event */
  const typed = (event) => setKey(event.currentTarget.value);
  /** @param {SubmitEvent} event */
  const submit = async (event) => {
    event.preventDefault();
    const candidate = key.trim();
    if (!candidate) {
      setError("Enter the API key.");
      input.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(candidate));
    } catch (e) {
      setError(refusal(/** @type {ApiError} */ (e)));
      input.current?.select();
    } finally {
      setBusy(false);
    }
  };
  return view`<main id="main" class="signin">
    <h1>Probe monitor</h1>
    ${message && view`<p role="status" class="notice">${message}</p>`}
    ${
    oidc && view`<p class="actions">
      <a class="button primary" href=${oidc.start}>Sign in with ${oidc.name}</a>
    </p>`
  }
    <form class="form" onSubmit=${submit} novalidate>
      <div class=${error ? "field invalid" : "field"}>
        <label for="api-key">API key</label>
        <input id="api-key" name="api-key" type="password" autocomplete="off" spellcheck=${false}
          ref=${input} value=${key} onInput=${typed}
          aria-invalid=${error ? "true" : undefined}
          aria-describedby=${error ? "api-key-hint api-key-error" : "api-key-hint"} />
        <p class="hint" id="api-key-hint">
          An API key (SERVICE_API_KEY, or one made on the keys page). It is sent once, to start a
          session; this browser keeps only the session's cookie, never the key.
        </p>
        ${error && view`<p class="field-error" id="api-key-error" role="alert">${error}</p>`}
      </div>
      <div class="actions">
        <button type="submit" class=${oidc ? undefined : "primary"} disabled=${busy}>
          ${busy ? "Signing in…" : "Sign in"}
        </button>
      </div>
    </form>
  </main>`;
}

function NotFound() {
  useTitle("Not found");
  return view`
    <div>
      <h1 tabindex="-1">Nothing here</h1>
      <p><a href=${href.overview()}>Back to the overview</a></p>
    </div>
  `;
}

function ReadOnly() {
  useTitle("Read-only key");
  return view`
    <div>
      <h1 tabindex="-1">This key may only read</h1>
      <p>
        It is one of SERVICE_API_KEYS_READONLY: it sees every project, probe and result, but cannot
        create, change, run or delete anything. Sign in with a key of SERVICE_API_KEY to do that.
      </p>
      <p><a href=${href.overview()}>Back to the overview</a></p>
    </div>
  `;
}

function NoNewProjects() {
  useTitle("Not allowed");
  return view`
    <div>
      <h1 tabindex="-1">You cannot create projects</h1>
      <p>You are limited to some projects: you may change them, not add others.</p>
      <p><a href=${href.overview()}>Back to the overview</a></p>
    </div>
  `;
}

/** Routes whose page changes something: a read-only key is told it cannot. */
const WRITING_ROUTES = new Set([
  "newProject",
  "newProbe",
  "editProbe",
  "newHeartbeat",
  "editHeartbeat",
]);

/** @param {{ route: Route }} props */
function Page({ route }) {
  const may = useAbilities();
  if (!may.write && WRITING_ROUTES.has(route.name)) return view`<${ReadOnly} />`;
  if (!may.createProjects && route.name === "newProject") return view`<${NoNewProjects} />`;
  switch (route.name) {
    case "overview":
      return view`<${Overview} />`;
    case "newProject":
      return view`<${NewProject} />`;
    case "locations":
      return view`<${LocationsPage} />`;
    case "project":
      return view`<${ProjectPage} key=${route.project} name=${route.project} />`;
    case "newProbe":
      return view`<${NewProbe} key=${route.project} project=${route.project} />`;
    case "probe":
      return view`
        <${ProbePage} key=${`${route.project}/${route.probeId}`}
          project=${route.project} probeId=${route.probeId} />
      `;
    case "editProbe":
      return view`<${EditProbe} project=${route.project} probeId=${route.probeId} />`;
    case "incidents":
      return view`<${IncidentsPage} key=${route.query} query=${route.query} />`;
    case "targets":
      return view`<${TargetsPage} />`;
    case "alertPolicy":
      return view`<${AlertPolicyPage} />`;
    case "settings":
      return view`<${SettingsPage} />`;
    case "audit":
      return view`<${AuditPage} />`;
    case "keys":
      return view`<${KeysPage} />`;
    case "projectAlerts":
      return view`<${ProjectAlertsPage} key=${route.project} project=${route.project} />`;
    case "maintenance":
      return view`<${MaintenancePage} key=${route.project} project=${route.project} />`;
    case "statusPage":
      return view`<${StatusPageSettings} key=${route.project} project=${route.project} />`;
    case "badges":
      return view`<${BadgesPage} key=${route.project} project=${route.project} />`;
    case "newHeartbeat":
      return view`<${NewHeartbeat} key=${route.project} project=${route.project} />`;
    case "heartbeat":
      return view`
        <${HeartbeatPage} key=${`${route.project}/${route.heartbeat}`}
          project=${route.project} name=${route.heartbeat} />
      `;
    case "editHeartbeat":
      return view`<${EditHeartbeat} project=${route.project} name=${route.heartbeat} />`;
    default:
      return view`<${NotFound} />`;
  }
}

/**
 * Moves focus to the new page's heading after navigation, as a page load would.
 * @param {Route} route
 * @param {boolean} focusFirst
 */
function useFocusOnNavigation(route, focusFirst) {
  const first = useRef(!focusFirst);
  const key = JSON.stringify(route);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    /** @type {HTMLElement | null} */ (document.querySelector("main h1"))?.focus();
    scrollTo(0, 0);
  }, [key]);
}

/** @param {{ onSignOut: () => void, justSignedIn: boolean, session: Session }} props */
function Signedin({ onSignOut, justSignedIn, session }) {
  const access = useMemo(() => ({ role: session.role, projects: session.projects }), [session]);
  const may = abilities(access);
  const route = useRoute();
  const [notice, setNotice] = useState(/** @type {string | null} */ (null));
  /** The route the notice belongs to: `next` until the next page is shown. */
  const noticeRoute = useRef(/** @type {string | null} */ (null));
  useFocusOnNavigation(route, justSignedIn);
  const key = JSON.stringify(route);
  // A notice lives for the page it was made for: set before navigating, shown on the next page.
  const notify = useCallback((/** @type {string} */ text) => {
    setNotice(text);
    noticeRoute.current = "next";
  }, []);
  useEffect(() => {
    if (noticeRoute.current === "next") noticeRoute.current = key;
    else if (noticeRoute.current !== key) setNotice(null);
  }, [key]);
  /** @param {MouseEvent} event */
  const skip = (event) => {
    event.preventDefault();
    document.getElementById("main")?.focus();
  };
  return view`
    <${AccessContext.Provider} value=${access}>
    <${NoticeContext.Provider} value=${notify}>
      <a class="skip" href="#main" onClick=${skip}>Skip to content</a>
      <header class="top">
        <a class="brand" href=${href.overview()}>Probe monitor</a>
        <nav aria-label="Main">
          <a href=${href.overview()} aria-current=${route.name === "overview" ? "page" : undefined}>
              Overview
            </a>
          ${
    may.createProjects &&
    view`<a href=${href.newProject()} aria-current=${
      route.name === "newProject" ? "page" : undefined
    }>
              New project
            </a>`
  }
          <a href=${href.incidents()}
            aria-current=${route.name === "incidents" ? "page" : undefined}>Incidents</a>
          <a href=${href.targets()}
            aria-current=${route.name === "targets" ? "page" : undefined}>Notification targets</a>
          <a href=${href.alertPolicy()}
            aria-current=${route.name === "alertPolicy" ? "page" : undefined}>Alert policy</a>
          <a href=${href.locations()} aria-current=${
    route.name === "locations" ? "page" : undefined
  }>Locations</a>
          <a href=${href.settings()}
            aria-current=${route.name === "settings" ? "page" : undefined}>Settings</a>
          ${
    // Both pages are an admin's of every project alone: to anyone else they say "forbidden".
    may.administer && view`<a href=${href.audit()}
            aria-current=${route.name === "audit" ? "page" : undefined}>Audit log</a>
          <a href=${href.keys()}
            aria-current=${route.name === "keys" ? "page" : undefined}>API keys</a>`}
          <a href="/docs">API reference</a>
        </nav>
        <${UserMenu} session=${session} onSignOut=${onSignOut} />
      </header>
      <main id="main" tabindex="-1">
          ${notice && view`<p class="notice" role="status">${notice}</p>`}
          <${Page} route=${route} />
        </main>
      <//>
    <//>
  `;
}

/**
 * Who is signed in (name, role, and the projects it is limited to) and the way out.
 * @param {{ session: Session, onSignOut: () => void }} props
 */
function UserMenu({ session, onSignOut }) {
  const readOnly = scopeOf(session.role) === "read";
  return view`<div class="user-menu">
    <span class="user-name">${session.name}</span>
    <span class="tag role">${session.role}</span>
    ${
    session.projects !== null &&
    view`<span class="tag projects" title="The projects you are limited to">${
      session.projects.join(", ") || "no project"
    }</span>`
  }
    ${
    readOnly &&
    view`<span class="tag scope">${session.kind === "key" ? "Read-only key" : "Read-only"}</span>`
  }
    <button type="button" class="signout" onClick=${onSignOut}>Sign out</button>
  </div>`;
}

const ENDED = "Your session has ended: sign in again.";

function App() {
  const [state, setState] = useState(/** @type {SessionState | null} */ (null));
  const [message, setMessage] = useState(/** @type {string | null} */ (null));
  const [justSignedIn, setJustSignedIn] = useState(false);
  const session = state?.session ?? null;
  useEffect(() => {
    sessionState().then((known) => {
      if (known.ended) setMessage(ENDED);
      setState(known);
    }).catch((/** @type {ApiError} */ e) => {
      setMessage(`Could not reach the service: ${e.message}.`);
      setState({ session: null, oidc: null });
    });
  }, []);
  const signedOut = (/** @type {string} */ why) => {
    setMessage(why);
    setState((known) => known && { ...known, session: null });
  };
  const signedIn = useRef(false);
  signedIn.current = session !== null;
  useEffect(() => onUnauthorized(() => signedIn.current && signedOut(ENDED)), []);
  const leave = async () => {
    await signOut().catch(() => {}); // Signed out here whatever the service said.
    signedOut("Signed out.");
  };
  if (state === null) return null;
  if (!session) {
    return view`<${SignIn} message=${message} oidc=${state.oidc} onSignedIn=${(
      /** @type {Session} */ started,
    ) => {
      forgetPrefetched();
      setMessage(null);
      setJustSignedIn(true);
      setState({ ...state, session: started });
    }} />`;
  }
  return view`<${Signedin} onSignOut=${leave} justSignedIn=${justSignedIn} session=${session} />`;
}

render(view`<${App} />`, /** @type {HTMLElement} */ (document.getElementById("app")));
