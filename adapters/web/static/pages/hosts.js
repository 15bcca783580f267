// Hosts: the other machines workspaces live on (hubListHosts, hubAddHost,
// hubCheckHost, hubRemoveHost). The Hub tests one before adding it and
// says why a test failed; nothing is stored then.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { hub } from '../api.js';
import { Link, addPath } from '../router.js';
import { announce } from '../announce.js';
import { Confirm, ErrorNote, Spinner, useAction } from '../ui.js';

/** hostProblem checks a host's name as the Hub will (HostName). */
export function hostProblem(name) {
  if (!name) return '';
  if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(name)) return 'Use 1–32 lowercase letters, digits or hyphens, starting with a letter or digit.';
  return '';
}

/** hostLabel names a workspace's machine: '' for the Hub's own. */
export function hostLabel(backend) {
  return backend && backend.startsWith('ssh:') ? backend.slice(4) : '';
}

export function HostsSection() {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [confirm, setConfirm] = useState(null); // the host to remove
  const [checked, setChecked] = useState({}); // name -> 'ok' or an error
  const action = useAction();
  const load = () => hub.hosts().then((r) => { setList(r.hosts); setError(null); }).catch(setError);
  useEffect(() => { load(); }, []);
  const check = (h) => action.run(async () => {
    try {
      await hub.checkHost(h.name);
      setChecked((c) => ({ ...c, [h.name]: 'ok' }));
      announce(`${h.name} answered`);
    } catch (e) {
      setChecked((c) => ({ ...c, [h.name]: e }));
    }
  });
  const remove = () => action.run(async () => {
    await hub.removeHost(confirm.name);
    announce(`${confirm.name} removed`);
    setConfirm(null);
    await load();
  });
  return html`<section class="card" aria-labelledby="hosts-title">
    <div class="card-head"><h2 id="hosts-title">Other machines</h2></div>
    <p class="pad muted">Workspaces can live on machines this Hub reaches with <code>ssh</code>. Their keys stay here.</p>
    ${error ? html`<div class="pad"><${ErrorNote} error=${error} /></div>` : null}
    ${!list && !error ? html`<p class="pad"><${Spinner} label="Loading hosts" /></p>` : null}
    ${list && list.length ? html`<ul class="sessions hosts">${list.map((h) => html`<li key=${h.name}>
      <div><span class="session-label">${h.name}</span> <code class="small">${h.destination}</code>
        <span class="muted small session-time">${h.workspaces === 1 ? '1 workspace' : `${h.workspaces} workspaces`}</span>
        ${checked[h.name] === 'ok' ? html` <span class="tag tag-current" role="status">Answered</span>` : null}
        ${checked[h.name] && checked[h.name] !== 'ok' ? html`<${ErrorNote} error=${checked[h.name]} />` : null}</div>
      <span class="dir-actions">
        <${Link} href=${addPath('', 'ssh:' + h.name)} class="btn btn-sm btn-quiet" aria-label=${`Browse ${h.name}`}>Browse<//>
        <button type="button" class="btn btn-sm btn-quiet" disabled=${action.busy} onClick=${() => check(h)}
          aria-label=${`Test ${h.name}`}>Test</button>
        <button type="button" class="btn btn-sm btn-quiet" onClick=${() => setConfirm(h)}
          aria-label=${`Remove ${h.name}`}>Remove</button>
      </span>
    </li>`)}</ul>` : null}
    <${AddHost} onAdded=${load} />
    ${confirm ? html`<${Confirm} title=${`Remove ${confirm.name}?`} confirm="Remove" danger busy=${action.busy}
      error=${action.error} onClose=${() => { setConfirm(null); action.setError(null); }} onConfirm=${remove}
      body=${html`<p>The Hub forgets this machine; nothing on it changes.${confirm.workspaces
        ? ' Workspaces still live there: forget them first.' : ''}</p>`} />` : null}
  </section>`;
}

function AddHost({ onAdded }) {
  const [name, setName] = useState('');
  const [dest, setDest] = useState('');
  const action = useAction();
  const problem = hostProblem(name);
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      const h = await hub.addHost(name, dest.trim());
      announce(`${h.name} added`);
      setName('');
      setDest('');
      await onAdded();
    });
  };
  return html`<form class="pad host-add" onSubmit=${submit} aria-labelledby="host-add-title">
    <h3 id="host-add-title">Add a machine</h3>
    <div class="row">
      <label class="field"><span class="field-label">Name</span>
        <input value=${name} spellcheck=${false} autocapitalize="none" placeholder="gpu" required
          aria-invalid=${problem ? 'true' : undefined} onInput=${(e) => setName(e.currentTarget.value)} />
        ${problem ? html`<span class="field-help field-problem">${problem}</span>` : null}</label>
      <label class="field field-grow"><span class="field-label">SSH destination</span>
        <input value=${dest} spellcheck=${false} autocapitalize="none" placeholder="you@gpu.example.net or an alias" required
          onInput=${(e) => setDest(e.currentTarget.value)} /></label>
    </div>
    <p class="small muted"><code>ssh</code> must log in without asking anything, to a host key already known here.</p>
    <${ErrorNote} error=${action.error} />
    <button class="btn btn-primary" type="submit" disabled=${action.busy || !name || !dest.trim() || !!problem}>
      ${action.busy ? html`<${Spinner} label="Testing the connection" /> Testing…` : 'Test and add'}</button>
  </form>`;
}

/** WherePicker picks the machine the Add page browses, once there is a host. */
export function WherePicker({ backend }) {
  const [hosts, setHosts] = useState(null);
  useEffect(() => { hub.hosts().then((r) => setHosts(r.hosts)).catch(() => setHosts([])); }, []);
  if (!hosts || !hosts.length) return null;
  const choices = [['local', 'This machine'], ...hosts.map((h) => ['ssh:' + h.name, h.name])];
  return html`<nav class="seg where" aria-label="Machine">
    ${choices.map(([v, label]) => html`<${Link} key=${v} href=${addPath('', v)} class="btn btn-sm"
      aria-current=${v === backend ? 'page' : undefined}>${label}<//>`)}
  </nav>`;
}
