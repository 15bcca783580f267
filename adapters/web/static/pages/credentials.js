// The Credentials page: the SSH keys, OpenPGP keys and tokens the Hub
// holds (hubListCredentials), each with what it may do, its fingerprint or
// host, whether it is enabled and ready, and the workspaces it is lent to;
// adding one (credentialforms.js), acting on one (credentialdialogs.js),
// its use policies and use log (credentialuse.js) and the tools they rely
// on (credentialtools.js). Everything goes through the documented API;
// the list is read again after every change and whenever the page comes
// back into view.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { creds } from '../api.js';
import { Link, wsPath } from '../router.js';
import { refresh, useModel } from '../model.js';
import { announce } from '../announce.js';
import { Empty, ErrorNote, Icon, Spinner, relTime, useAction, usePageTitle } from '../ui.js';
import { capabilityNames, GenerateOpenPgpDialog, GenerateSshDialog, ImportOpenPgpDialog, ImportSshDialog, TokenDialog } from './credentialforms.js';
import { AssignDialog, DeleteDialog, PublicKeyDialog, UnassignDialog, UnlockDialog } from './credentialdialogs.js';
import { readyOf, Tools } from './credentialtools.js';
import { PolicySelect, UseLog } from './credentialuse.js';
import { wsName } from '../approvals.js';

const adders = [
  ['sshGenerate', 'Generate an SSH key', GenerateSshDialog],
  ['sshImport', 'Import an SSH key', ImportSshDialog],
  ['pgpGenerate', 'Generate an OpenPGP key', GenerateOpenPgpDialog],
  ['pgpImport', 'Import an OpenPGP key', ImportOpenPgpDialog],
  ['token', 'Add a token', TokenDialog],
];

const typeNames = { ssh: 'SSH key', openpgp: 'OpenPGP key', token: 'Token' };

export function CredentialsPage() {
  usePageTitle('Credentials');
  useModel(); // workspace names in the assignments
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [adding, setAdding] = useState('');
  const load = () => creds.list().then((r) => { setList(r.credentials); setError(null); }, setError);
  useEffect(() => {
    load();
    const shown = () => { if (!document.hidden) load(); };
    document.addEventListener('visibilitychange', shown);
    return () => document.removeEventListener('visibilitychange', shown);
  }, []);
  const added = async () => { await load(); };
  const Adder = adders.find((a) => a[0] === adding)?.[2];
  return html`<main class="page page-creds" id="main">
    <div class="page-head"><h1 tabindex="-1">Credentials ${list ? html`<span class="count">${list.length}</span>` : null}</h1></div>
    <p class="lead">Keys and tokens the Hub keeps for you. A workspace gets only the ones you assign to it, while they are
      enabled and unlocked.</p>
    <section class="card pad cred-add" aria-labelledby="add-title">
      <h2 id="add-title">Add a credential</h2>
      <div class="cred-add-actions">
        ${adders.map(([k, label]) => html`<button key=${k} type="button" class="btn btn-sm" onClick=${() => setAdding(k)}>
          <${Icon} name="plus" size=${16} />${label}</button>`)}
      </div>
    </section>
    ${error ? html`<${ErrorNote} error=${error} /><button class="btn" type="button" onClick=${load}>Try again</button>` : null}
    ${!list && !error ? html`<p><${Spinner} label="Loading credentials" /></p>` : null}
    ${list && !list.length ? html`<${Empty} title="No credentials yet">
      <p>Generate a key here and add its public half to your Git host, or import the key you already use. The private key
        never leaves the Hub.</p><//>` : null}
    ${list && list.length ? html`<ul class="cred-list" aria-label="Credentials">
      ${list.map((c) => html`<${Row} key=${c.id} c=${c} all=${list} reload=${load} />`)}</ul>` : null}
    <${Tools} />
    ${Adder ? html`<${Adder} onClose=${() => setAdding('')} onDone=${added} />` : null}
  </main>`;
}

/** stateOf names a credential's state for people, from its record. */
export function stateOf(c) {
  if (!c.enabled) return { key: 'stopped', label: 'Disabled' };
  if (readyOf(c.readiness)) return { key: 'running', label: 'Ready' };
  if (locked(c)) return { key: 'awaiting', label: 'Locked' };
  return { key: 'stopped', label: 'Unavailable' };
}

/** locked: a key that needs an unlock (its runtime layer is unavailable). */
const locked = (c) => c.type !== 'token' && c.enabled && c.readiness.some((r) => r.layer === 'runtime' && r.status === 'unavailable');
const unlocked = (c) => c.type !== 'token' && c.enabled && c.readiness.some((r) => r.layer === 'runtime' && r.status === 'ready');

/** roleText says what an assignment lends the workspace. */
const roleText = (a) => (a.role === 'signing' ? 'signs commits' : `logs in to ${a.host}`);

function Row({ c, all, reload }) {
  const [dialog, setDialog] = useState(null); // {kind, a?}
  const [tested, setTested] = useState(null);
  const [log, setLog] = useState(false);
  const action = useAction();
  const st = stateOf(c);
  const close = () => setDialog(null);
  const after = async () => { await reload(); };
  const act = (fn, said) => action.run(async () => {
    setTested(null);
    await fn(c.id);
    announce(`${c.name} ${said}`);
    await reload();
    await refresh();
  });
  const test = () => action.run(async () => {
    setTested(null);
    const r = await creds.test(c.id);
    setTested(r.results);
    announce(`${c.name}: ${r.results.map((x) => x.message).join(' ')}`);
  });
  const md = c.metadata;
  const label = (verb) => `${verb} ${c.name}`;
  return html`<li class=${'cred-row cred-' + st.key} data-cred=${c.id}>
    <div class="cred-main">
      <div class="cred-title">
        <span class="cred-name">${c.name}</span>
        <span class="tag">${typeNames[c.type] || c.type}</span>
        <span class=${'badge badge-' + st.key}><span class="dot" aria-hidden="true"></span>${st.label}</span>
      </div>
      <div class="cred-meta">
        ${c.type === 'token'
          ? html`<span class="cred-host"><span class="muted">Host</span> <code>${md.host}</code></span>
            <span class="cred-user"><span class="muted">User</span> <code>${md.username || 'oauth2'}</code></span>`
          : html`<code class="cred-fp" title="Fingerprint">${md.fingerprint}</code>`}
        <span class="muted small">Added <time datetime=${c.createdAt} title=${new Date(c.createdAt).toLocaleString()}>${relTime(Date.parse(c.createdAt))}</time></span>
      </div>
      <div class="cred-caps">${c.capabilities.map((k) => html`<span class="tag" key=${k} title=${k}>${capabilityNames[k] || k}</span>`)}</div>
      <ul class="readiness">${c.readiness.map((r, i) => html`<li key=${i} class=${'ready-' + r.status}>${r.message}</li>`)}</ul>
      ${tested ? html`<p class="note note-info cred-test" role="status">Test: ${tested.map((r) => r.message).join(' ')}</p>` : null}
    </div>
    <div class="cred-assign">
      <h3 class="cred-sub">Workspaces</h3>
      ${c.assignments.length ? html`<ul class="assignments">${c.assignments.map((a) => html`<li key=${a.workspaceId + a.role + (a.host || '')}>
        <${Link} href=${wsPath(a.workspaceId)}>${wsName(a.workspaceId)}<//> <span class="muted">${roleText(a)}</span>
        <${PolicySelect} cred=${c} a=${a} onChanged=${after}
          label=${`When ${wsName(a.workspaceId)} may use ${c.name}: ${roleText(a)}`} />
        <button type="button" class="btn btn-sm btn-quiet" onClick=${() => setDialog({ kind: 'unassign', a })}
          aria-label=${`Remove ${c.name} from ${wsName(a.workspaceId)}: ${roleText(a)}`}>Remove</button>
      </li>`)}</ul>` : html`<p class="muted small">Not assigned to any workspace.</p>`}
    </div>
    <div class="cred-actions">
      ${locked(c) ? html`<button type="button" class="btn btn-sm btn-primary" onClick=${() => setDialog({ kind: 'unlock' })}
        aria-label=${label('Unlock')}><${Icon} name="lock" size=${16} />Unlock</button>` : null}
      ${unlocked(c) ? html`<button type="button" class="btn btn-sm" disabled=${action.busy} onClick=${() => act(creds.lock, 'locked')}
        aria-label=${label('Lock')}><${Icon} name="lock" size=${16} />Lock</button>` : null}
      <button type="button" class="btn btn-sm" onClick=${() => setDialog({ kind: 'assign' })} aria-label=${label('Assign')}>Assign</button>
      ${c.type !== 'token' ? html`<button type="button" class="btn btn-sm btn-quiet" onClick=${() => setDialog({ kind: 'key' })}
        aria-label=${`Public key of ${c.name}`}>Public key</button>` : null}
      <button type="button" class="btn btn-sm btn-quiet" disabled=${action.busy} onClick=${test} aria-label=${label('Test')}>Test</button>
      <button type="button" class="btn btn-sm btn-quiet" aria-expanded=${log ? 'true' : 'false'} aria-controls=${'uses-' + c.id}
        onClick=${() => setLog(!log)} aria-label=${`Use log of ${c.name}`}>Use log</button>
      <button type="button" class="btn btn-sm btn-quiet" disabled=${action.busy}
        onClick=${() => (c.enabled ? act(creds.disable, 'disabled') : act(creds.enable, 'enabled'))}
        aria-label=${label(c.enabled ? 'Disable' : 'Enable')}>${c.enabled ? 'Disable' : 'Enable'}</button>
      <button type="button" class="btn btn-sm btn-danger-quiet" onClick=${() => setDialog({ kind: 'delete' })}
        aria-label=${label('Delete')}>Delete</button>
    </div>
    ${log ? html`<${UseLog} cred=${c} id=${'uses-' + c.id} />` : null}
    ${action.error ? html`<div class="cred-error"><${ErrorNote} error=${action.error} /></div>` : null}
    ${dialog?.kind === 'unlock' ? html`<${UnlockDialog} cred=${c} onClose=${close} onDone=${after} />` : null}
    ${dialog?.kind === 'assign' ? html`<${AssignDialog} cred=${c} all=${all} onClose=${close} onDone=${after} />` : null}
    ${dialog?.kind === 'unassign' ? html`<${UnassignDialog} cred=${c} a=${dialog.a} onClose=${close} onDone=${after} />` : null}
    ${dialog?.kind === 'delete' ? html`<${DeleteDialog} cred=${c} onClose=${close} onDone=${after} />` : null}
    ${dialog?.kind === 'key' ? html`<${PublicKeyDialog} cred=${c} onClose=${close} />` : null}
  </li>`;
}
