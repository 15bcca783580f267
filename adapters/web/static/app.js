// The dashboard's frame: the header with the navigation, the live
// stream's state and the uses of credentials waiting for approval, and
// the page of the current route. Pages other than the
// login page need a session: the first 401 of any request sends the user
// to the login page, which brings them back here afterwards.
import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';
import { hub, setExpiredHandler } from './api.js';
import { Link, loginPath, navigate, useLocation } from './router.js';
import { reconnectNow, start, stop, useModel } from './model.js';
import { clearSignedIn, userName, wasSignedIn } from './signin.js';
import { ErrorNote, Icon, Logo, Spinner, useNow, usePageTitle } from './ui.js';
import { LoginPage } from './pages/login.js';
import { WorkspacesPage } from './pages/workspaces.js';
import { AddPage } from './pages/add.js';
import { WorkspacePage } from './pages/workspace.js';
import { SettingsPage } from './pages/settings.js';
import { Approvals } from './approvals.js';
import { renew } from './notify/push.js';

setExpiredHandler(() => {
  // On the login page a 401 is no news (and a late one must not stop the
  // dashboard that a login has just started).
  if (location.pathname === '/login') return;
  const reason = wasSignedIn() ? 'expired' : '';
  clearSignedIn();
  stop();
  navigate(loginPath(reason), { replace: true });
});

/** signOut revokes this device's session (the cookie is cleared with it). */
export async function signOut() {
  const { sessions } = await hub.sessions();
  const me = sessions.find((s) => s.current);
  if (me) await hub.revokeSession(me.handle);
  clearSignedIn();
  stop();
  navigate('/login?reason=signedout', { replace: true });
}

function LiveStatus() {
  const m = useModel();
  const s = m.live.state;
  if (s === 'live') return html`<span class="live live-on" role="status" title="Changes appear as they happen">Live</span>`;
  if (s === 'reconnecting' || s === 'connecting') {
    const title = m.live.message || 'Connecting to the Hub';
    return html`<span class="live live-off" role="status" title=${title}>${s === 'connecting' ? 'Connecting…' : 'Reconnecting…'}</span>`;
  }
  return null; // idle: no workspace to follow yet
}

/**
 * Reconnecting says, under the header, why the live stream is down and
 * when it tries again, with a way to try at once, from the first failed
 * connection until one succeeds.
 */
function Reconnecting() {
  const m = useModel();
  const now = useNow(1000);
  const s = m.live;
  if (s.state !== 'reconnecting' || !s.retryAt) return null;
  const secs = Math.max(0, Math.ceil((s.retryAt - now) / 1000));
  return html`<div class="banner" role="status">
    <span>${s.message || 'The connection to the Hub was lost.'} What you see may be out of date.
      ${secs > 0 ? ` Trying again in ${secs} s.` : ' Trying again…'}</span>
    <button type="button" class="btn btn-sm" onClick=${reconnectNow}>Retry now</button>
  </div>`;
}

function Header({ path }) {
  const [error, setError] = useState(null);
  const item = (href, label, icon, current) => html`<${Link} href=${href} class="nav-link"
    aria-current=${current ? 'page' : undefined}><${Icon} name=${icon} /><span>${label}</span><//>`;
  const out = async () => {
    setError(null);
    try { await signOut(); } catch (e) { setError(e); }
  };
  const user = userName();
  return html`<header class="top">
    <div class="top-inner">
      <${Link} href="/" class="brand" aria-label="Wharf, workspaces"><${Logo} /><span>Wharf</span><//>
      <nav class="nav" aria-label="Main">
        ${item('/', 'Workspaces', 'home', path === '/' || path.startsWith('/w/'))}
        ${item('/add', 'Add', 'plus', path === '/add' || path === '/clone' || path.startsWith('/clone/'))}
        ${item('/credentials', 'Credentials', 'key', path === '/credentials')}
        ${item('/agents', 'Agents', 'chat', path === '/agents')}
        ${item('/settings', 'Settings', 'gear', path === '/settings')}
      </nav>
      <div class="top-end">
        <${LiveStatus} />
        <button type="button" class="btn btn-quiet" onClick=${out} title=${user ? `Signed in as ${user}` : 'Sign out'}>
          <${Icon} name="out" /><span class="hide-sm">Sign out</span>
        </button>
      </div>
    </div>
    ${error ? html`<div class="top-error"><${ErrorNote} error=${error} /></div>` : null}
    <${Reconnecting} />
    <${Approvals} />
  </header>`;
}

// The conversation page is its own chunk of modules, fetched the first
// time one is opened: the first load of the dashboard does not pay for it.
const loadConversationPage = () => import('./chat/page.js').then((mod) => mod.ConversationPage);

// The Credentials page and its dialogs, likewise.
const loadCredentialsPage = () => import('./pages/credentials.js').then((mod) => mod.CredentialsPage);

// The Agents page (agent logins), likewise.
const loadAgentsPage = () => import('./agents/page.js').then((mod) => mod.AgentsPage);

// The Clone page and a clone job's page, likewise (one chunk).
const loadClonePage = () => import('./clone/page.js').then((mod) => mod.ClonePage);
const loadCloneJobPage = () => import('./clone/page.js').then((mod) => mod.CloneJobPage);

const loaded = new Map(); // load function -> the component it resolved to

/**
 * Lazy renders the component load() resolves to, with a quiet line until
 * then (only the first time: once loaded, it renders at once).
 */
function Lazy({ load, ...props }) {
  const [state, setState] = useState({ comp: loaded.get(load) || null, error: null });
  useEffect(() => {
    if (state.comp) return undefined;
    let live = true;
    load().then((comp) => {
      loaded.set(load, comp);
      if (live) setState({ comp, error: null });
    }, () => { if (live) setState({ comp: null, error: new Error('This page could not be loaded. Reload to try again.') }); });
    return () => { live = false; };
  }, [load]);
  if (state.comp) return h(state.comp, props);
  return html`<main class="page" id="main">${state.error ? html`<${ErrorNote} error=${state.error} />` : html`<${Spinner} />`}</main>`;
}

function NotFound() {
  usePageTitle('Not found');
  return html`<main class="page" id="main"><h1 tabindex="-1">Nothing here</h1>
    <p>This address is not a page of the dashboard. <${Link} href="/">Go to your workspaces<//>.</p></main>`;
}

function Route({ path, query }) {
  if (path === '/') return html`<${WorkspacesPage} />`;
  if (path === '/add') return html`<${AddPage} query=${query} />`;
  if (path === '/settings') return html`<${SettingsPage} />`;
  if (path === '/credentials') return html`<${Lazy} load=${loadCredentialsPage} />`;
  if (path === '/agents') return html`<${Lazy} load=${loadAgentsPage} query=${query} />`;
  if (path === '/clone') return html`<${Lazy} load=${loadClonePage} query=${query} />`;
  const job = /^\/clone\/([^/]+)$/.exec(path);
  if (job) {
    let id = '';
    try { id = decodeURIComponent(job[1]); } catch { return html`<${NotFound} />`; }
    return html`<${Lazy} key=${id} load=${loadCloneJobPage} id=${id} />`;
  }
  const m = /^\/w\/([^/]+)(?:\/c\/([^/]+))?$/.exec(path);
  if (m) {
    let id = '';
    let cid = '';
    try {
      id = decodeURIComponent(m[1]);
      cid = m[2] ? decodeURIComponent(m[2]) : '';
    } catch { return html`<${NotFound} />`; }
    if (cid) return html`<${Lazy} key=${id + '\n' + cid} load=${loadConversationPage} id=${id} cid=${cid} />`;
    return html`<${WorkspacePage} key=${id} id=${id} query=${query} />`;
  }
  return html`<${NotFound} />`;
}

export function App() {
  const { path, query } = useLocation();
  const isLogin = path === '/login';
  useEffect(() => {
    if (isLogin) return;
    start();
    renew(); // a push subscription the browser dropped since the last load
  }, [isLogin]);
  // Move focus to the new page's heading, so keyboard and screen-reader
  // users start at the top of what changed.
  useEffect(() => {
    const h1 = document.querySelector('main h1');
    if (h1 && document.activeElement === document.body) h1.focus({ preventScroll: true });
  }, [path]);
  if (isLogin) return html`<${LoginPage} query=${query} />`;
  return html`<div class=${'shell' + (/^\/w\/[^/]+\/c\//.test(path) ? ' shell-conv' : '')}>
    <a class="skip" href="#main">Skip to content</a>
    <${Header} path=${path} />
    <${Route} path=${path} query=${query} />
    <div class="sr-only" aria-live="polite" id="announce"></div>
  </div>`;
}

