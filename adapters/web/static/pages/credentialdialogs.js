// The dialogs of one credential: unlocking it (the passphrase is cleared
// after the answer, whatever it is), assigning it to a workspace with a
// use policy and removing an assignment (asking before it stops a running
// workspace), deleting it, and showing its public key to copy.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { creds, ApiError } from '../api.js';
import { refresh, useModel, workspace } from '../model.js';
import { announce } from '../announce.js';
import { Confirm, Dialog, ErrorNote, Spinner, useAction } from '../ui.js';
import { policies, policyName, wsName } from '../approvals.js';

/** canAuthenticate / canSign say which roles credential c may take. */
export const canAuthenticate = (c) => c.capabilities.some((k) => ['ssh-authentication', 'https-git', 'github-cli', 'gitlab-cli'].includes(k));
export const canSign = (c) => c.capabilities.some((k) => k === 'ssh-signing' || k === 'openpgp-signing');


export function UnlockDialog({ cred, onClose, onDone }) {
  const [pass, setPass] = useState('');
  const action = useAction();
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      let res;
      try {
        res = await creds.unlock(cred.id, pass);
      } finally {
        setPass('');
      }
      announce(`${cred.name} unlocked`);
      onDone(res.credential);
      onClose();
    });
  };
  return html`<${Dialog} title=${`Unlock ${cred.name}`} onClose=${onClose}>
    <form class="dialog-body" onSubmit=${submit} autocomplete="off">
      <p class="muted small">The key stays unlocked in the Hub's memory until you lock or disable it, or the Hub restarts.
        ${cred.type === 'ssh' ? ' A key without a passphrase unlocks with an empty one.' : ''}</p>
      <label class="field"><span class="field-label">Passphrase</span>
        <input type="password" autofocus autocomplete="off" spellcheck=${false} autocapitalize="none" value=${pass}
          onInput=${(e) => setPass(e.currentTarget.value)} /></label>
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${action.busy}>${action.busy ? 'Unlocking…' : 'Unlock'}</button>
      </div>
    </form>
  <//>`;
}

/**
 * AssignDialog makes the credential a workspace's authentication default
 * for one host, or its signing default. When another credential holds
 * that default (all lists says so), it says which, and assigning replaces
 * it. Its use policy is chosen here too: assigning the credential again
 * where it is already changes only that.
 */
export function AssignDialog({ cred, all, onClose, onDone }) {
  const m = useModel();
  const roles = [canAuthenticate(cred) ? 'authentication' : null, canSign(cred) ? 'signing' : null].filter(Boolean);
  const wss = (m.state?.workspaces || []).filter((w) => !w.parentId);
  const [ws, setWs] = useState(wss[0]?.id || '');
  const [role, setRole] = useState(roles[0] || '');
  const [host, setHost] = useState(cred.type === 'token' ? cred.metadata.host : '');
  const [picked, setPolicy] = useState('');
  const action = useAction();
  const h = host.trim().toLowerCase().replace(/\.$/, '');
  const here = (a) => a.workspaceId === ws && a.role === role && (role === 'signing' || a.host === h);
  const holder = all.find((c) => c.id !== cred.id && c.assignments.some(here));
  const current = cred.assignments.find(here); // this credential, here already: a new policy
  const policy = picked || current?.usePolicy || 'always';
  const submit = (e) => {
    e.preventDefault();
    if (!ws) { action.setError(new Error('Pick a workspace.')); return; }
    if (role === 'authentication' && !h) { action.setError(new Error('Give the host it logs in to, such as github.com.')); return; }
    action.run(async () => {
      const req = { workspaceId: ws, role, usePolicy: policy };
      if (role === 'authentication') req.host = host.trim();
      if (holder) req.replace = true;
      await creds.assign(cred.id, req);
      announce(current ? `${cred.name} in ${wsName(ws)}: ${policyName(policy)}` : `${cred.name} assigned to ${wsName(ws)}`);
      await refresh();
      onDone();
      onClose();
    });
  };
  return html`<${Dialog} title=${`Assign ${cred.name}`} onClose=${onClose}>
    <form class="dialog-body" onSubmit=${submit}>
      ${wss.length ? null : html`<p class="note note-info">There is no workspace to assign it to yet.</p>`}
      <label class="field"><span class="field-label">Workspace</span>
        <select autofocus value=${ws} onChange=${(e) => setWs(e.currentTarget.value)}>
          ${wss.map((w) => html`<option key=${w.id} value=${w.id}>${w.displayName}</option>`)}
        </select></label>
      <fieldset class="field"><legend class="field-label">Role</legend>
        ${roles.map((r) => html`<label class="check" key=${r}><input type="radio" name="role" value=${r} checked=${role === r}
          onChange=${() => setRole(r)} />${r === 'authentication' ? 'Log in to a Git host' : 'Sign commits'}</label>`)}
      </fieldset>
      ${role === 'authentication' ? html`<label class="field"><span class="field-label">Host</span>
        <input value=${host} spellcheck=${false} autocapitalize="none" placeholder="github.com" readonly=${cred.type === 'token'}
          onInput=${(e) => setHost(e.currentTarget.value)} />
        <span class="field-help">${cred.type === 'token' ? 'A token is offered to its own host only.' : 'The workspace offers this key to that host only.'}</span></label>` : null}
      <fieldset class="field policy-field"><legend class="field-label">When the workspace may use it</legend>
        ${policies.map(([p, name, help]) => html`<label class="check policy-choice" key=${p}><input type="radio" name="usePolicy" value=${p}
          checked=${policy === p} onChange=${() => setPolicy(p)} /><span>${name}<span class="field-help">${help}</span></span></label>`)}
      </fieldset>
      ${holder ? html`<p class="note note-warn">${holder.name} is this workspace's ${role === 'signing' ? 'signing key' : `login for ${h}`} now;
        assigning replaces it.</p>` : null}
      <p class="muted small">${current ? 'It is assigned here already: a new policy applies to its next use, without a restart.'
        : 'A running workspace picks the change up when it restarts.'}</p>
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${action.busy || !wss.length}>
          ${action.busy ? 'Assigning…' : holder ? 'Replace' : current ? 'Save' : 'Assign'}</button>
      </div>
    </form>
  <//>`;
}

/**
 * UnassignDialog removes one assignment. The Hub refuses (409) while the
 * workspace runs; then it asks again, and "Stop and remove" stops the
 * workspace and removes the assignment in one operation.
 */
export function UnassignDialog({ cred, a, onClose, onDone }) {
  const [ask, setAsk] = useState(null);
  const action = useAction();
  const what = a.role === 'signing' ? 'signing' : `logging in to ${a.host}`;
  const go = (stop) => action.run(async () => {
    const req = { workspaceId: a.workspaceId, role: a.role };
    if (a.role === 'authentication') req.host = a.host;
    if (stop) req.stop = true;
    try {
      await creds.unassign(cred.id, req);
    } catch (e) {
      if (!stop && e instanceof ApiError && e.status === 409) {
        await refresh();
        if (workspace(a.workspaceId)?.running) { setAsk(e); return; }
      }
      throw e;
    }
    announce(`${cred.name} removed from ${wsName(a.workspaceId)}`);
    await refresh();
    onDone();
    onClose();
  });
  if (ask) {
    return html`<${Confirm} title=${`Stop ${wsName(a.workspaceId)}?`} confirm="Stop and remove" danger busy=${action.busy}
      error=${action.error} onClose=${onClose} onConfirm=${() => go(true)}
      body=${html`<p>${ask.message}</p><p>${wsName(a.workspaceId)} is running with ${cred.name}. Wharf stops it and removes the
        assignment together; start it again afterwards.</p>`} />`;
  }
  return html`<${Confirm} title=${`Remove ${cred.name} from ${wsName(a.workspaceId)}?`} confirm="Remove" danger busy=${action.busy}
    error=${action.error} onClose=${onClose} onConfirm=${() => go(false)}
    body=${html`<p>The workspace no longer gets it for ${what}. The credential itself stays.</p>`} />`;
}

/** DeleteDialog deletes the credential, with its assignments when it has some. */
export function DeleteDialog({ cred, onClose, onDone }) {
  const n = cred.assignments.length;
  const [alsoUnassign, setAlso] = useState(false);
  const action = useAction();
  const go = () => action.run(async () => {
    await creds.remove(cred.id, n > 0 && alsoUnassign);
    announce(`${cred.name} deleted`);
    await refresh();
    onDone();
    onClose();
  });
  return html`<${Dialog} title=${`Delete ${cred.name}?`} onClose=${onClose}>
    <div class="dialog-body">
      <p>${cred.type === 'token' ? 'The token is' : 'The private key is'} removed from the Hub for good; this cannot be undone.
        ${cred.type === 'token' ? '' : ' Its public key stays wherever you added it: remove it there too.'}</p>
      ${n ? html`<label class="check"><input type="checkbox" checked=${alsoUnassign} onChange=${(e) => setAlso(e.currentTarget.checked)} />
        Also remove its ${n === 1 ? 'assignment' : `${n} assignments`}</label>
        <p class="field-help">It is assigned to ${[...new Set(cred.assignments.map((a) => wsName(a.workspaceId)))].join(', ')}.</p>` : null}
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="button" class="btn btn-danger" autofocus disabled=${action.busy || (n > 0 && !alsoUnassign)} onClick=${go}>
          ${action.busy ? 'Deleting…' : 'Delete'}</button>
      </div>
    </div>
  <//>`;
}

/**
 * PublicKeyDialog shows a key's public half (hubGetCredentialPublicKey),
 * selected, with a button that copies it where the browser allows.
 */
export function PublicKeyDialog({ cred, onClose }) {
  const [key, setKey] = useState(null);
  const [error, setError] = useState(null);
  const [copied, setCopied] = useState('');
  const area = useRef(null);
  useEffect(() => { creds.publicKey(cred.id).then(setKey, setError); }, [cred.id]);
  useEffect(() => { if (key && area.current) area.current.select(); }, [key]);
  const copy = async () => {
    area.current?.select();
    try {
      await navigator.clipboard.writeText(key.publicKey);
      setCopied('Copied.');
    } catch {
      setCopied('This browser does not let the page copy: the key is selected, copy it with your keyboard.');
    }
  };
  return html`<${Dialog} title=${`Public key of ${cred.name}`} onClose=${onClose}>
    <div class="dialog-body">
      <${ErrorNote} error=${error} />
      ${key ? html`<p class="muted small">${cred.type === 'ssh' ? 'Add it to your Git host as an SSH key (for logging in, signing or both).'
        : 'Add it to your Git host as a GPG key, so signed commits show as verified.'}</p>
        <textarea ref=${area} class="key-text public-key" readonly rows=${cred.type === 'ssh' ? 3 : 8} spellcheck=${false}
          aria-label="Public key" value=${key.publicKey}></textarea>
        <p class="muted small"><code>${key.fingerprint}</code></p>
        ${copied ? html`<p class="note note-info" role="status">${copied}</p>` : null}` : error ? null : html`<${Spinner} />`}
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Close</button>
        <button type="button" class="btn btn-primary" autofocus disabled=${!key} onClick=${copy}>Copy</button>
      </div>
    </div>
  <//>`;
}
