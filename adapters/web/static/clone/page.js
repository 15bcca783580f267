// The Clone page (hubCreateCloneJob): a repository's URL, the folder it
// is cloned into (picked with the folder browser; the workspace default
// parent unless the address names one, ?dest=), on the Hub's machine or
// on a host (?backend=, from the Add page), the checkout's folder
// and display names (derived from the URL as the Hub derives them unless
// typed), the credential the clone logs in with (only those that fit the
// URL), whether the workspace keeps it, the key that signs its commits,
// and whether it starts. Submitting opens the job's page, /clone/{jobId},
// which any device of the user can open and follow.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { clones, creds, hub } from '../api.js';
import { Link, navigate } from '../router.js';
import { ErrorNote, Icon, useAction, usePageTitle } from '../ui.js';
import { folderNameProblem } from '../pages/add.js';
import { hostLabel } from '../pages/hosts.js';
import { FolderPicker } from './folderpick.js';
import { canSign, deriveFolderName, fits, sourceOf } from './rules.js';

export { CloneJobPage } from './job.js';

/** clonePath is the page of clone job id. */
export const clonePath = (id) => '/clone/' + encodeURIComponent(id);

export function ClonePage({ query }) {
  usePageTitle('Clone a repository');
  const [url, setUrl] = useState('');
  const backend = query.get('backend') || 'local';
  const remote = hostLabel(backend); // the host's name; '' on the Hub's machine
  const [dest, setDest] = useState(query.get('dest') || '');
  const [folder, setFolder] = useState('');
  const [name, setName] = useState('');
  const [credId, setCredId] = useState('');
  const [keep, setKeep] = useState(false);
  const [signing, setSigning] = useState('');
  const [startNow, setStartNow] = useState(false);
  const [picking, setPicking] = useState(false);
  const [list, setList] = useState(null);
  const [loadError, setLoadError] = useState(null);
  const action = useAction();

  useEffect(() => {
    if (!dest && remote) hub.browse('', backend).then((r) => setDest((cur) => cur || r.path), setLoadError);
    else if (!dest) hub.defaults().then((d) => setDest((cur) => cur || d.effective), setLoadError);
    creds.list().then((r) => setList(r.credentials), setLoadError);
  }, []);

  const src = sourceOf(url);
  const derived = deriveFolderName(url);
  const usable = (list || []).filter((c) => fits(c, src));
  const signers = (list || []).filter(canSign);
  const cred = usable.find((c) => c.id === credId) || null;
  const folderProblem = folder.trim() ? folderNameProblem(folder.trim()) : '';
  // A choice that no longer fits the URL is dropped, not sent.
  useEffect(() => { if (credId && !cred) setCredId(''); }, [credId, cred]);

  const submit = (e) => {
    e.preventDefault();
    if (folderProblem) { action.setError(new Error(folderProblem)); return; }
    action.run(async () => {
      const req = { url: url.trim(), dest, start: startNow };
      if (remote) req.backend = backend;
      if (folder.trim()) req.folderName = folder.trim();
      if (name.trim()) req.displayName = name.trim();
      if (cred) {
        req.credentialId = cred.id;
        if (keep) req.retainedAuthentication = [{ credentialId: cred.id, host: cred.type === 'token' ? cred.metadata.host : src.host }];
      }
      if (signing) req.signing = signing;
      const res = await clones.create(req);
      navigate(clonePath(res.jobId));
    });
  };

  return html`<main class="page page-clone" id="main">
    <div class="page-head"><h1 tabindex="-1">Clone a repository</h1></div>
    <p class="lead">The Hub clones it into a folder on ${remote ? html`<strong>${remote}</strong>` : 'its machine'} and
      registers it as a workspace. If Git asks something (a user name, a password), you answer on the next page.</p>
    <form class="card pad clone-form" onSubmit=${submit} autocomplete="off">
      <label class="field"><span class="field-label">Repository URL</span>
        <input name="url" value=${url} required spellcheck=${false} autocapitalize="none" inputmode="url"
          placeholder="https://github.com/you/project.git" onInput=${(e) => setUrl(e.currentTarget.value)} />
        <span class="field-help">HTTPS, SSH (<code>git@host:path</code>), <code>file://</code> or an absolute path on ${remote || "the Hub's machine"}. Never put a password or token in it: choose a credential below.</span></label>
      <div class="field"><span class="field-label" id="dest-label">Clone into${remote ? ` (on ${remote})` : ''}</span>
        <div class="dest-row"><code class="dest" aria-labelledby="dest-label">${dest || '…'}</code>
          <button type="button" class="btn btn-sm" disabled=${!dest} onClick=${() => setPicking(true)}>
            <${Icon} name="folder" size=${16} />Change</button></div></div>
      <div class="clone-names">
        <label class="field"><span class="field-label">Folder name</span>
          <input name="folderName" value=${folder} spellcheck=${false} autocapitalize="none" placeholder=${derived}
            aria-invalid=${folderProblem ? 'true' : undefined} onInput=${(e) => setFolder(e.currentTarget.value)} />
          ${folderProblem ? html`<span class="field-help field-problem">${folderProblem}</span>` : null}</label>
        <label class="field"><span class="field-label">Display name</span>
          <input name="displayName" value=${name} maxlength="64" placeholder=${folder.trim() || derived}
            onInput=${(e) => setName(e.currentTarget.value)} /></label>
      </div>
      <${CredentialChoice} src=${src} usable=${usable} list=${list} credId=${credId} setCredId=${setCredId} />
      ${cred ? html`<label class="check"><input type="checkbox" name="keep" checked=${keep} onChange=${(e) => setKeep(e.currentTarget.checked)} />
        Keep ${cred.name} as the workspace's login for ${cred.type === 'token' ? cred.metadata.host : src.host}</label>` : null}
      <label class="field"><span class="field-label">Sign commits with</span>
        <select name="signing" value=${signing} onChange=${(e) => setSigning(e.currentTarget.value)}>
          <option value="">No signing key</option>
          ${signers.map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}
        </select></label>
      <label class="check"><input type="checkbox" name="start" checked=${startNow} onChange=${(e) => setStartNow(e.currentTarget.checked)} />
        Start it after the clone</label>
      <${ErrorNote} error=${loadError || action.error} />
      <div class="clone-actions">
        <button class="btn btn-primary" type="submit" disabled=${action.busy || !url.trim() || !dest || !!folderProblem}>
          ${action.busy ? 'Starting…' : 'Clone'}</button>
      </div>
    </form>
    ${picking ? html`<${FolderPicker} start=${dest} backend=${backend} onPick=${setDest} onClose=${() => setPicking(false)} />` : null}
  </main>`;
}

function CredentialChoice({ src, usable, list, credId, setCredId }) {
  const help = src.transport === 'ssh' ? 'SSH keys that log in, held by the Hub.'
    : src.transport === 'https' ? `Tokens for ${src.host || 'the host'} with Git over HTTPS.`
      : 'Credentials are for SSH and HTTPS URLs only.';
  return html`<label class="field"><span class="field-label">Log in with</span>
    <select name="credential" value=${credId} disabled=${src.transport === 'other'} onChange=${(e) => setCredId(e.currentTarget.value)}>
      <option value="">No credential (Git asks if it must)</option>
      ${usable.map((c) => html`<option key=${c.id} value=${c.id}>${c.name}</option>`)}
    </select>
    <span class="field-help">${help}${list && src.transport !== 'other' && !usable.length
      ? html` None fits this URL: <${Link} href="/credentials">add one<//>.` : null}</span></label>`;
}
