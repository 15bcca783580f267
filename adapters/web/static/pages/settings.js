// Settings: this user's device sessions (revoke the others), push
// notifications on this device, the default folder for new workspaces,
// the other machines workspaces live on, the theme, and what Hub this is.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { hub } from '../api.js';
import { Link, addPath } from '../router.js';
import { useModel } from '../model.js';
import { announce } from '../announce.js';
import { Confirm, ErrorNote, Spinner, relTime, useAction, usePageTitle } from '../ui.js';
import { setTheme, theme } from '../theme.js';
import { userName } from '../signin.js';
import { NotificationsSection } from '../notify/section.js';
import { HostsSection } from './hosts.js';

export function SettingsPage() {
  usePageTitle('Settings');
  return html`<main class="page page-settings" id="main">
    <div class="page-head"><h1 tabindex="-1">Settings</h1></div>
    <${Sessions} />
    <${NotificationsSection} />
    <${Defaults} />
    <${HostsSection} />
    <${Appearance} />
    <${About} />
  </main>`;
}

function Sessions() {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [confirm, setConfirm] = useState(null); // a session, or 'others'
  const action = useAction();
  const load = () => hub.sessions().then((r) => { setList(r.sessions); setError(null); }).catch(setError);
  useEffect(() => { load(); }, []);
  const others = (list || []).filter((s) => !s.current);
  const revoke = () => action.run(async () => {
    const targets = confirm === 'others' ? others : [confirm];
    for (const s of targets) await hub.revokeSession(s.handle);
    announce(targets.length === 1 ? `${targets[0].deviceLabel} signed out` : `${targets.length} devices signed out`);
    setConfirm(null);
    await load();
  });
  const user = userName();
  return html`<section class="card" aria-labelledby="sessions-title">
    <div class="card-head">
      <h2 id="sessions-title">Devices signed in${user ? html` as <span class="user">${user}</span>` : null}</h2>
      ${others.length > 1 ? html`<button type="button" class="btn btn-sm btn-danger-quiet" onClick=${() => setConfirm('others')}>Sign out all others</button>` : null}
    </div>
    ${error ? html`<div class="pad"><${ErrorNote} error=${error} /></div>` : null}
    ${!list && !error ? html`<p class="pad"><${Spinner} label="Loading devices" /></p>` : null}
    ${list ? html`<ul class="sessions">${list.map((s) => html`<li key=${s.handle}>
      <div><span class="session-label">${s.deviceLabel || 'Unnamed device'}</span>
        ${s.current ? html` <span class="tag tag-current">This device</span>` : null}
        <span class="muted small session-time">Signed in ${relTime(s.issuedAt * 1000)}</span></div>
      ${s.current ? null : html`<button type="button" class="btn btn-sm btn-quiet" onClick=${() => setConfirm(s)}
        aria-label=${`Sign out ${s.deviceLabel}`}>Sign out</button>`}
    </li>`)}</ul>` : null}
    ${confirm ? html`<${Confirm} title=${confirm === 'others' ? 'Sign out every other device?' : `Sign out ${confirm.deviceLabel}?`}
      confirm="Sign out" danger busy=${action.busy} error=${action.error} onClose=${() => setConfirm(null)} onConfirm=${revoke}
      body=${html`<p>${confirm === 'others' ? `${others.length} devices` : 'That device'} must log in again to reach this Hub.
        Its open pages stop updating at once.</p>`} />` : null}
  </section>`;
}

function Defaults() {
  const [d, setD] = useState(null);
  const [value, setValue] = useState('');
  const [error, setError] = useState(null);
  const action = useAction();
  useEffect(() => {
    hub.defaults().then((r) => { setD(r); setValue(r.configured || ''); }).catch(setError);
  }, []);
  const save = (parent) => action.run(async () => {
    const r = await hub.setDefaults(parent);
    setD(r);
    setValue(r.configured || '');
    announce(parent === null ? 'Default folder cleared' : 'Default folder saved');
  });
  const submit = (e) => {
    e.preventDefault();
    const v = value.trim();
    if (!v.startsWith('/')) { action.setError(new Error('Type an absolute path, starting with /.')); return; }
    save(v);
  };
  return html`<section class="card pad" aria-labelledby="defaults-title">
    <h2 id="defaults-title">Where new workspaces go</h2>
    <p class="muted">The folder browser starts here, and new repositories are suggested inside it. It never limits what you
      can register.</p>
    ${error ? html`<${ErrorNote} error=${error} />` : null}
    ${d ? html`<p>Now: <code>${d.effective}</code>${d.configured ? '' : ' (your home folder: nothing is set)'}</p>
      ${d.configured && !d.configuredAvailable ? html`<p class="note note-warn">The folder set here, <code>${d.configured}</code>,
        is not available (missing, unreadable or a symbolic link); your home folder is used instead.</p>` : null}
      <form class="row" onSubmit=${submit}>
        <label class="field field-grow"><span class="field-label">Default folder</span>
          <input value=${value} spellcheck=${false} autocapitalize="none" placeholder=${d.effective}
            onInput=${(e) => setValue(e.currentTarget.value)} /></label>
        <button class="btn btn-primary" type="submit" disabled=${action.busy}>Save</button>
        ${d.configured ? html`<button class="btn btn-quiet" type="button" disabled=${action.busy} onClick=${() => save(null)}>Clear</button>` : null}
      </form>
      <p class="small"><${Link} href=${addPath(d.effective)}>Browse it<//></p>` : !error ? html`<${Spinner} />` : null}
    <${ErrorNote} error=${action.error} />
  </section>`;
}

function Appearance() {
  const [t, setT] = useState(theme());
  const pick = (v) => { setT(v); setTheme(v); };
  return html`<section class="card pad" aria-labelledby="theme-title">
    <h2 id="theme-title">Appearance</h2>
    <div class="seg" role="radiogroup" aria-labelledby="theme-title">
      ${[['system', 'As the system'], ['light', 'Light'], ['dark', 'Dark']].map(([v, label]) => html`<button type="button"
        role="radio" aria-checked=${t === v} onClick=${() => pick(v)}>${label}</button>`)}
    </div>
  </section>`;
}

function About() {
  const m = useModel();
  const s = m.state;
  return html`<section class="card pad" aria-labelledby="about-title">
    <h2 id="about-title">About this Hub</h2>
    ${s ? html`<p class="muted">Wharf ${s.version} · contract Hub ${s.hubApiRevision} / Workspace ${s.workspaceApiRevision} ·
      <a href="/api/openapi.yaml">the API</a></p>` : html`<${Spinner} />`}
  </section>`;
}
