// Adding a credential, one dialog each: generating an SSH or OpenPGP key,
// importing one (pasted or read from a file), storing a token. What is
// secret (a passphrase, a private key, a token) lives in the dialog's own
// state only: it goes to the Hub in one request and is cleared as soon as
// the answer comes, whatever it is, and closing the dialog drops the
// inputs that held it. Nothing is checked here that the Hub checks, except
// what would make the person retype a secret for nothing (a missing name,
// no capability, two passphrases that differ).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { creds } from '../api.js';
import { announce } from '../announce.js';
import { Dialog, ErrorNote, useAction } from '../ui.js';

/** The capabilities a credential of each type can have, with words for people. */
export const capabilityNames = {
  'ssh-authentication': 'Log in to Git hosts (SSH)',
  'ssh-signing': 'Sign commits',
  'openpgp-signing': 'Sign commits',
  'https-git': 'Git over HTTPS',
  'github-cli': 'GitHub CLI (gh)',
  'gitlab-cli': 'GitLab CLI (glab)',
};

const sshCaps = ['ssh-authentication', 'ssh-signing'];
const tokenCaps = ['https-git', 'github-cli', 'gitlab-cli'];

/** The largest key file read (the Hub's limit is 1 MiB too). */
const MAX_KEY_FILE = 1 << 20;

/** Secret is a password input for a passphrase or a token, never autofilled. */
function Secret({ label, name, value, set, autocomplete = 'off', help, required = true }) {
  return html`<label class="field"><span class="field-label">${label}</span>
    <input type="password" name=${name} autocomplete=${autocomplete} spellcheck=${false} autocapitalize="none" required=${required}
      value=${value} onInput=${(e) => set(e.currentTarget.value)} />
    ${help ? html`<span class="field-help">${help}</span>` : null}</label>`;
}

function Name({ value, set, placeholder }) {
  return html`<label class="field"><span class="field-label">Name</span>
    <input autofocus name="name" maxlength="256" required value=${value} placeholder=${placeholder}
      onInput=${(e) => set(e.currentTarget.value)} />
    <span class="field-help">For you: shown in this list and on workspaces.</span></label>`;
}

/** Capabilities picks some of options (checkboxes). */
function Capabilities({ options, value, set }) {
  const toggle = (c, on) => set(on ? options.filter((o) => o === c || value.includes(o)) : value.filter((o) => o !== c));
  return html`<fieldset class="field caps"><legend class="field-label">What it may do</legend>
    ${options.map((c) => html`<label class="check" key=${c}><input type="checkbox" name="capability" value=${c}
      checked=${value.includes(c)} onChange=${(e) => toggle(c, e.currentTarget.checked)} />${capabilityNames[c]}</label>`)}
  </fieldset>`;
}

/**
 * KeySource takes a private key pasted into a text area or read from a
 * file ({text, file}: file names where it came from).
 */
function KeySource({ value, set, what, onError }) {
  const choose = async (e) => {
    const input = e.currentTarget;
    const f = input.files && input.files[0];
    input.value = '';
    if (!f) return;
    if (f.size > MAX_KEY_FILE) { onError(new Error(`${f.name} is larger than 1 MiB: that is no ${what}.`)); return; }
    try {
      set({ text: await f.text(), file: f.name });
    } catch {
      onError(new Error(`${f.name} could not be read.`));
    }
  };
  return html`<div class="field key-source">
    ${value.file
      ? html`<span class="field-label">${what}</span>
        <p class="note note-info">Read from <code>${value.file}</code>.
          <button type="button" class="btn btn-sm btn-quiet" onClick=${() => set({ text: '', file: '' })}>Paste instead</button></p>`
      : html`<label class="field"><span class="field-label">${what}</span>
        <textarea class="key-text" rows="6" spellcheck=${false} autocomplete="off" autocapitalize="none" value=${value.text}
          placeholder="-----BEGIN …" onInput=${(e) => set({ text: e.currentTarget.value, file: '' })}></textarea></label>`}
    <label class="file-pick"><span>Or choose a file:</span>
      <input type="file" onChange=${choose} /></label>
  </div>`;
}

/**
 * Form is the frame of every adding dialog: its fields, the error, and
 * the buttons. check() names what is missing ('' when nothing); send()
 * makes the request; clear() forgets the secrets, after every answer.
 */
function Form({ title, verb, busyVerb, check, send, clear, onClose, onDone, children }) {
  const action = useAction();
  const submit = (e) => {
    e.preventDefault();
    const problem = check();
    if (problem) { action.setError(new Error(problem)); return; }
    action.run(async () => {
      let res;
      try {
        res = await send();
      } finally {
        clear();
      }
      announce(`${res.credential.name} added`);
      onDone(res.credential);
      onClose();
    });
  };
  return html`<${Dialog} title=${title} onClose=${onClose}>
    <form class="dialog-body cred-form" onSubmit=${submit} autocomplete="off">
      ${children}
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${action.busy}>${action.busy ? busyVerb : verb}</button>
      </div>
    </form>
  <//>`;
}

const needName = (name) => (name.trim() ? '' : 'Give it a name.');

function newPassphrase(p1, p2) {
  if (!p1) return 'Choose a passphrase: it protects the key on the Hub.';
  if (p1 !== p2) return 'The two passphrases differ.';
  return '';
}

export function GenerateSshDialog({ onClose, onDone }) {
  const [name, setName] = useState('');
  const [caps, setCaps] = useState(sshCaps);
  const [p1, setP1] = useState('');
  const [p2, setP2] = useState('');
  return html`<${Form} title="Generate an SSH key" verb="Generate" busyVerb="Generating…" onClose=${onClose} onDone=${onDone}
    check=${() => needName(name) || (caps.length ? '' : 'Pick at least one thing it may do.') || newPassphrase(p1, p2)}
    send=${() => creds.generateSsh(name.trim(), caps, p1)} clear=${() => { setP1(''); setP2(''); }}>
    <p class="muted small">An Ed25519 key, kept encrypted with your passphrase. Add its public key to your Git host afterwards.</p>
    <${Name} value=${name} set=${setName} placeholder="laptop GitHub key" />
    <${Capabilities} options=${sshCaps} value=${caps} set=${setCaps} />
    <${Secret} label="Passphrase" name="passphrase" value=${p1} set=${setP1} autocomplete="new-password" />
    <${Secret} label="Passphrase again" name="passphrase2" value=${p2} set=${setP2} autocomplete="new-password"
      help="Wharf cannot recover it: without it the key cannot be unlocked." />
  <//>`;
}

export function GenerateOpenPgpDialog({ onClose, onDone }) {
  const [name, setName] = useState('');
  const [userId, setUserId] = useState('');
  const [p1, setP1] = useState('');
  const [p2, setP2] = useState('');
  return html`<${Form} title="Generate an OpenPGP key" verb="Generate" busyVerb="Generating…" onClose=${onClose} onDone=${onDone}
    check=${() => needName(name) || (userId.trim() ? '' : 'Give the user id, such as Ann <ann@example.com>.') || newPassphrase(p1, p2)}
    send=${() => creds.generateOpenPgp(name.trim(), userId.trim(), p1)} clear=${() => { setP1(''); setP2(''); }}>
    <p class="muted small">An Ed25519 signing key that never expires, for signed commits.</p>
    <${Name} value=${name} set=${setName} placeholder="commit signing" />
    <label class="field"><span class="field-label">User id</span>
      <input maxlength="256" value=${userId} placeholder="Ann <ann@example.com>" onInput=${(e) => setUserId(e.currentTarget.value)} />
      <span class="field-help">Use the name and email of your commits, so hosts show them as verified.</span></label>
    <${Secret} label="Passphrase" name="passphrase" value=${p1} set=${setP1} autocomplete="new-password" />
    <${Secret} label="Passphrase again" name="passphrase2" value=${p2} set=${setP2} autocomplete="new-password" />
  <//>`;
}

export function ImportSshDialog({ onClose, onDone }) {
  const [name, setName] = useState('');
  const [caps, setCaps] = useState(sshCaps);
  const [key, setKey] = useState({ text: '', file: '' });
  const [pass, setPass] = useState('');
  const [readError, setReadError] = useState(null);
  return html`<${Form} title="Import an SSH key" verb="Import" busyVerb="Importing…" onClose=${onClose} onDone=${onDone}
    check=${() => needName(name) || (caps.length ? '' : 'Pick at least one thing it may do.') || (key.text.trim() ? '' : 'Paste the private key or choose its file.')}
    send=${() => creds.importSsh(name.trim(), caps, key.text, pass)}
    clear=${() => { setKey({ text: '', file: '' }); setPass(''); }}>
    <${Name} value=${name} set=${setName} placeholder="work key" />
    <${Capabilities} options=${sshCaps} value=${caps} set=${setCaps} />
    <${KeySource} value=${key} set=${(v) => { setReadError(null); setKey(v); }} what="Private key" onError=${setReadError} />
    <${ErrorNote} error=${readError} />
    <${Secret} label="Its passphrase" name="passphrase" value=${pass} set=${setPass} required=${false}
      help="Leave empty for a key without one. The key stays encrypted on the Hub as it is." />
  <//>`;
}

export function ImportOpenPgpDialog({ onClose, onDone }) {
  const [name, setName] = useState('');
  const [key, setKey] = useState({ text: '', file: '' });
  const [readError, setReadError] = useState(null);
  return html`<${Form} title="Import an OpenPGP key" verb="Import" busyVerb="Importing…" onClose=${onClose} onDone=${onDone}
    check=${() => needName(name) || (key.text.trim() ? '' : 'Paste the armored secret key or choose its file.')}
    send=${() => creds.importOpenPgp(name.trim(), key.text)} clear=${() => setKey({ text: '', file: '' })}>
    <${Name} value=${name} set=${setName} placeholder="release signing" />
    <${KeySource} value=${key} set=${(v) => { setReadError(null); setKey(v); }} what="Armored secret key" onError=${setReadError} />
    <${ErrorNote} error=${readError} />
    <p class="muted small">It keeps its own passphrase: unlock it afterwards to sign with it.</p>
  <//>`;
}

export function TokenDialog({ onClose, onDone }) {
  const [name, setName] = useState('');
  const [host, setHost] = useState('');
  const [user, setUser] = useState('');
  const [token, setToken] = useState('');
  const [caps, setCaps] = useState(['https-git']);
  const check = () => needName(name) || (host.trim() ? '' : 'Give the host, such as github.com.')
    || (caps.length ? '' : 'Pick at least one thing it may do.')
    || (caps.includes('github-cli') && caps.includes('gitlab-cli') ? 'One token serves the GitHub CLI or the GitLab CLI, not both.' : '')
    || (token ? '' : 'Paste the token.');
  const send = () => {
    const req = { name: name.trim(), host: host.trim(), token, capabilities: caps };
    if (user.trim()) req.username = user.trim();
    return creds.createToken(req);
  };
  return html`<${Form} title="Add a token" verb="Add token" busyVerb="Adding…" onClose=${onClose} onDone=${onDone}
    check=${check} send=${send} clear=${() => setToken('')}>
    <${Name} value=${name} set=${setName} placeholder="GitHub token" />
    <label class="field"><span class="field-label">Host</span>
      <input maxlength="256" value=${host} spellcheck=${false} autocapitalize="none" placeholder="github.com"
        onInput=${(e) => setHost(e.currentTarget.value)} />
      <span class="field-help">The one host it is offered to, as a name or an address, with a port if it needs one.</span></label>
    <label class="field"><span class="field-label">User name <span class="muted">(optional)</span></span>
      <input maxlength="256" value=${user} spellcheck=${false} autocapitalize="none" placeholder="oauth2"
        onInput=${(e) => setUser(e.currentTarget.value)} /></label>
    <${Secret} label="Token" name="token" value=${token} set=${setToken} help="Stored encrypted on the Hub; never shown again." />
    <${Capabilities} options=${tokenCaps} value=${caps} set=${setCaps} />
  <//>`;
}
