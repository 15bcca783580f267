// One provider an agent logs in to (AgentAccountTarget): its saved
// logins (Log out where the agent can remove them, Make active where it
// keeps several), the login in progress or just ended, and the ways to
// log in.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { accounts } from '../api.js';
import { announce } from '../announce.js';
import { Confirm, ErrorNote, useAction } from '../ui.js';
import { attemptOf } from './accounts.js';
import { Attempt } from './attempt.js';
import { Methods } from './methods.js';

/** Saved logins' kinds (AgentAccountCredential.kind), for people. */
const kindWords = {
  key: 'API key',
  oauth: 'Browser login',
  saved: 'Saved login',
  env: 'Environment variable',
  config: 'Configuration file',
  other: 'Other',
};

/**
 * Target is target t of agent a. dismissed/dismiss keep the settled
 * attempts the person put away (for this page's life only).
 */
export function Target({ a, t, acc, dismissed, dismiss, heading = true }) {
  const [started, setStarted] = useState(false);
  const at = attemptOf(acc.snap, a.agent, t.id);
  const shownAt = at && !(at.state !== 'pending' && dismissed.has(at.id)) ? at : null;
  const method = shownAt && t.methods.find((m) => m.id === shownAt.method);
  return html`<section class="acct-target" data-target=${t.id} aria-label=${heading ? undefined : t.name}>
    ${heading ? html`<div class="acct-target-head">
      <h3>${t.name || t.id}</h3>
      ${t.connected ? html`<span class="badge badge-running"><span class="dot" aria-hidden="true"></span>Logged in</span>`
        : html`<span class="badge badge-stopped"><span class="dot" aria-hidden="true"></span>Not logged in</span>`}
    </div>` : null}
    <${Credentials} a=${a} t=${t} acc=${acc} />
    ${shownAt ? html`<${Attempt} key=${shownAt.id} a=${a} t=${t} at=${shownAt} label=${method?.label || shownAt.method}
      acc=${acc} autoFocus=${started} onDismiss=${() => dismiss(shownAt.id)} />` : null}
    <${Methods} a=${a} t=${t} acc=${acc} canLogin=${a.capabilities.login} onStarted=${() => setStarted(true)} />
  </section>`;
}

function Credentials({ a, t, acc }) {
  if (!t.credentials.length) return html`<p class="muted small acct-none">No saved login.</p>`;
  return html`<h4 class="acct-sub acct-sub-first">Saved logins</h4>
    <ul class="acct-creds" aria-label=${`Saved logins for ${t.name || t.id}`}>
      ${t.credentials.map((c) => html`<${Credential} key=${c.id} a=${a} t=${t} c=${c} acc=${acc} />`)}
    </ul>`;
}

function Credential({ a, t, c, acc }) {
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const out = useAction();
  const label = c.label || c.id;
  const activate = () => action.run(async () => {
    acc.apply(await accounts.activate(a.agent, c.id));
    announce(`${label} is now the active login of ${t.name}`);
  });
  const logout = () => out.run(async () => {
    acc.apply(await accounts.logout(a.agent, t.id, c.id));
    setAsking(false);
    announce(`${label} logged out`);
  });
  return html`<li class=${'acct-cred' + (c.active ? ' acct-cred-active' : '')} data-cred=${c.id}>
    <div class="acct-cred-main">
      <span class="acct-cred-label">${label}</span>
      <span class="tag">${kindWords[c.kind] || c.kind}</span>
      ${c.active ? html`<span class="badge badge-running"><span class="dot" aria-hidden="true"></span>Active</span>` : null}
      ${c.variables && c.variables.length && c.variables.join(', ') !== label
        ? html`<span class="muted small">from ${c.variables.map((v, i) => html`${i ? ', ' : ''}<code key=${v}>${v}</code>`)}</span>` : null}
      ${c.status ? html`<span class="muted small">${c.status}</span>` : null}
    </div>
    <div class="acct-cred-actions">
      ${a.capabilities.activate && !c.active ? html`<button type="button" class="btn btn-sm" disabled=${action.busy}
        onClick=${activate} aria-label=${`Make ${label} active`}>Make active</button>` : null}
      ${a.capabilities.logout && c.removable ? html`<button type="button" class="btn btn-sm btn-danger-quiet"
        onClick=${() => setAsking(true)} aria-label=${`Log out ${label}`}>Log out</button>` : null}
    </div>
    ${action.error ? html`<div class="acct-cred-error"><${ErrorNote} error=${action.error} /></div>` : null}
    ${asking ? html`<${Confirm} title=${`Log out ${label}?`} confirm="Log out" danger busy=${out.busy} error=${out.error}
      onConfirm=${logout} onClose=${() => setAsking(false)}
      body=${html`<p>It is removed from ${a.name}'s own store on the Hub machine: every workspace and every Hub user stop using it.</p>`} />` : null}
  </li>`;
}
