// Adding a workspace: a folder browser over hubBrowse that starts at the
// default workspace parent; new folders; renaming and removing folders
// (asking before it stops the workspaces they hold); and registering the
// folder in view (hubConfigureWorkspace, confirming `git init` when the
// Hub says it needs one) or creating a new repository in it
// (hubCreateConfiguredWorkspace), or cloning a repository into it (the
// Clone page); on a host (?backend=), the same there. The folder in view
// is in the address (?path=), so Back and a reload keep the place.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { hub, ApiError } from '../api.js';
import { Link, addPath, navigate, wsPath } from '../router.js';
import { refresh, useModel, workspace } from '../model.js';
import { announce } from '../announce.js';
import { baseName, Confirm, Dialog, Empty, ErrorNote, Icon, Spinner, useAction, usePageTitle } from '../ui.js';
import { WherePicker, hostLabel } from './hosts.js';


/** folderNameProblem checks a new folder name as the Hub will (FolderName). */
export function folderNameProblem(name) {
  if (!name.trim()) return 'A folder name cannot be blank.';
  if (name.startsWith('.')) return 'A folder name cannot start with a dot (hidden folders are not listed).';
  if (/[/\\]/.test(name)) return 'A folder name cannot hold / or \\.';
  return '';
}

export function AddPage({ query }) {
  usePageTitle('Add a workspace');
  const m = useModel();
  const path = query.get('path') || '';
  const backend = query.get('backend') || 'local';
  const remote = hostLabel(backend); // the host's name; '' on the Hub's machine
  const [listing, setListing] = useState(null);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(true);
  const [reload, setReload] = useState(0);
  const [dialog, setDialog] = useState(null);

  useEffect(() => {
    let live = true;
    setLoading(true);
    hub.browse(path, backend).then((res) => {
      if (!live) return;
      setListing(res);
      setError(null);
      if (!path) navigate(addPath(res.path, backend), { replace: true });
    }).catch((e) => { if (live) setError(e); }).finally(() => { if (live) setLoading(false); });
    return () => { live = false; };
  }, [path, backend, reload]);

  const again = () => setReload((n) => n + 1);
  const here = listing?.path || path;
  const registered = here ? m.state?.workspaces.find((w) => w.path === here && (w.backend || 'local') === backend) : null;

  return html`<main class="page page-add" id="main">
    <div class="page-head"><h1 tabindex="-1">Add a workspace</h1></div>
    <p class="lead">Pick a folder on ${remote ? html`<strong>${remote}</strong>` : "the Hub's machine"}, then register it, or create
      a new repository inside it.</p>
    <${WherePicker} backend=${backend} />
    <${GoTo} current=${here} backend=${backend} />
    <${Crumbs} path=${here} backend=${backend} />
    <section class="card browser" aria-label="Folders" aria-busy=${loading ? 'true' : 'false'}>
      <div class="browser-bar">
        ${listing?.parent ? html`<${Link} href=${addPath(listing.parent, backend)} class="btn btn-sm btn-quiet"><${Icon} name="up" size=${16} />Up<//>` : null}
        <span class="browser-here" title=${here}>${here || ' '}</span>
        ${loading ? html`<${Spinner} label="Loading folders" />` : null}
        <button type="button" class="btn btn-sm" disabled=${!listing} onClick=${() => setDialog({ kind: 'mkdir' })}>
          <${Icon} name="plus" size=${16} />New folder</button>
      </div>
      ${error ? html`<div class="pad"><${ErrorNote} error=${error} />
        <button type="button" class="btn btn-sm" onClick=${again}>Try again</button>
        ${listing ? null : html` <${Link} href=${addPath('', backend)} class="btn btn-sm btn-quiet">Go to the default folder<//>`}</div>` : null}
      ${listing && !listing.dirs.length ? html`<${Empty} title="No folders here"><p>Create one, or register this folder itself below.</p><//>` : null}
      ${listing && listing.dirs.length ? html`<ul class="dirs">
        ${listing.dirs.map((d) => html`<${Dir} key=${d.name} parent=${listing.path} dir=${d} backend=${backend}
          onAct=${setDialog} />`)}
      </ul>` : null}
    </section>
    ${listing ? html`<div class="add-panels">
      ${registered
        ? html`<section class="card pad"><h2>Already a workspace</h2><p>This folder is registered as
            <${Link} href=${wsPath(registered.id)}>${registered.displayName}<//>.</p></section>`
        : html`<${Register} path=${listing.path} backend=${backend} />`}
      <${CreateRepository} parent=${listing.path} backend=${backend} />
      <section class="card pad" aria-labelledby="clone-title">
        <h2 id="clone-title">Clone a repository here</h2>
        <p class="muted">Git clones it into a new folder inside <code>${listing.path}</code>${remote
          ? html` on <strong>${remote}</strong>` : null}, registered as a workspace.</p>
        <${Link} href=${clonePagePath(listing.path, backend)} class="btn">Clone a repository<//>
      </section>
    </div>` : null}
    ${dialog?.kind === 'mkdir' ? html`<${MkdirDialog} parent=${here} backend=${backend} onClose=${() => setDialog(null)} onDone=${again} />` : null}
    ${dialog?.kind === 'rename' ? html`<${RenameFolderDialog} dir=${dialog.dir} path=${dialog.path} backend=${backend}
      onClose=${() => setDialog(null)} onDone=${again} />` : null}
    ${dialog?.kind === 'remove' ? html`<${RemoveFolderDialog} dir=${dialog.dir} path=${dialog.path} backend=${backend}
      onClose=${() => setDialog(null)} onDone=${again} />` : null}
  </main>`;
}

/** clonePagePath is the Clone page, cloning into dest on backend. */
const clonePagePath = (dest, backend) => {
  const q = new URLSearchParams({ dest });
  if (backend && backend !== 'local') q.set('backend', backend);
  return '/clone?' + q.toString();
};

const join = (parent, name) => (parent === '/' ? '/' + name : parent + '/' + name);

function Dir({ parent, dir, backend, onAct }) {
  const p = join(parent, dir.name);
  return html`<li class="dir">
    <div class="dir-main">
      <${Link} href=${addPath(p, backend)} class="dir-name"><${Icon} name="folder" /><span>${dir.name}</span><//>
      <span class="dir-tags">
        ${dir.git ? html`<span class="tag">Git</span>` : null}
        ${dir.registeredId ? html`<${Link} href=${wsPath(dir.registeredId)} class="tag tag-ws"
          title="Registered workspace">${dir.running ? '● ' : ''}${dir.displayName}<//>` : null}
      </span>
    </div>
    ${onAct ? html`<span class="dir-actions">
      <button type="button" class="btn btn-sm btn-quiet" onClick=${() => onAct({ kind: 'rename', dir, path: p })}
        aria-label=${`Rename folder ${dir.name}`}>Rename</button>
      <button type="button" class="btn btn-sm btn-quiet" onClick=${() => onAct({ kind: 'remove', dir, path: p })}
        aria-label=${`Remove folder ${dir.name}`}>Remove</button>
    </span>` : null}
  </li>`;
}

function Crumbs({ path, backend }) {
  if (!path) return null;
  const parts = path.split('/').filter(Boolean);
  const items = [{ label: '/', to: '/' }];
  parts.forEach((p, i) => items.push({ label: p, to: '/' + parts.slice(0, i + 1).join('/') }));
  return html`<nav class="crumbs" aria-label="Folder path"><ol>
    ${items.map((it, i) => html`<li key=${it.to}>${i === items.length - 1
      ? html`<span aria-current="location">${it.label}</span>`
      : html`<${Link} href=${addPath(it.to, backend)}>${it.label}<//>`}</li>`)}
  </ol></nav>`;
}

function GoTo({ current, backend }) {
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState('');
  const go = (e) => {
    e.preventDefault();
    const v = value.trim();
    if (!v.startsWith('/')) {
      setProblem('Type an absolute path, starting with /.');
      return;
    }
    setProblem('');
    setValue('');
    navigate(addPath(v, backend));
  };
  return html`<form class="goto" onSubmit=${go}>
    <label class="field field-inline"><span class="sr-only">Go to folder</span>
      <input value=${value} placeholder=${current ? `Go to a path, e.g. ${current}` : 'Go to a path'} spellcheck=${false}
        autocapitalize="none" onInput=${(e) => setValue(e.currentTarget.value)} aria-describedby="goto-problem" />
    </label>
    <button class="btn" type="submit">Go</button>
    ${problem ? html`<p class="note note-error" id="goto-problem" role="alert">${problem}</p>` : null}
  </form>`;
}

/** stopNames names the workspaces a FolderStopConflict would stop. */
function stopNames(err) {
  const ids = err?.body?.workspaceIds || [];
  return ids.map((id) => workspace(id)?.displayName || id).join(', ');
}

/**
 * withStop runs fn(false); on a FolderStopConflict it asks (through
 * setAsk) and, once the user agrees, runs fn(true).
 */
async function withStop(fn, setAsk) {
  try {
    return await fn(false);
  } catch (e) {
    if (e instanceof ApiError && e.status === 409 && e.body?.needsStop) {
      setAsk(e);
      return undefined;
    }
    throw e;
  }
}

function MkdirDialog({ parent, backend, onClose, onDone }) {
  const [name, setName] = useState('');
  const action = useAction();
  const problem = name ? folderNameProblem(name) : '';
  const submit = (e) => {
    e.preventDefault();
    const p = folderNameProblem(name);
    if (p) { action.setError(new Error(p)); return; }
    action.run(async () => {
      const res = await hub.createFolder(parent, name, backend);
      announce(`Folder ${name} created`);
      onClose();
      onDone();
      navigate(addPath(res.path, backend));
    });
  };
  return html`<${Dialog} title="New folder" onClose=${onClose}>
    <form class="dialog-body" onSubmit=${submit}>
      <p class="muted">Inside <code>${parent}</code></p>
      <label class="field"><span class="field-label">Folder name</span>
        <input autofocus value=${name} spellcheck=${false} autocapitalize="none" onInput=${(e) => setName(e.currentTarget.value)}
          aria-invalid=${problem ? 'true' : undefined} />
        ${problem ? html`<span class="field-help field-problem">${problem}</span>` : null}
      </label>
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${action.busy || !name}>${action.busy ? 'Creating…' : 'Create'}</button>
      </div>
    </form>
  <//>`;
}

function RenameFolderDialog({ dir, path, backend, onClose, onDone }) {
  const [name, setName] = useState(dir.name);
  const [ask, setAsk] = useState(null);
  const action = useAction();
  const problem = folderNameProblem(name);
  const rename = (stop) => action.run(() => withStop(async (s) => {
    await hub.renameFolder(path, name, s || stop, backend);
    await refresh();
    announce(`Folder renamed to ${name}`);
    onClose();
    onDone();
  }, setAsk));
  if (ask) {
    return html`<${Confirm} title="Stop workspaces to rename?" confirm="Stop and rename" danger busy=${action.busy}
      error=${action.error} onClose=${onClose} onConfirm=${() => rename(true)}
      body=${html`<p>Renaming <code>${path}</code> moves running workspaces: ${stopNames(ask)}.
        They stop first; start them again afterwards.</p>`} />`;
  }
  return html`<${Dialog} title="Rename folder" onClose=${onClose}>
    <form class="dialog-body" onSubmit=${(e) => { e.preventDefault(); if (!problem) rename(false); }}>
      <label class="field"><span class="field-label">New name</span>
        <input autofocus value=${name} spellcheck=${false} autocapitalize="none" onInput=${(e) => setName(e.currentTarget.value)}
          aria-invalid=${problem ? 'true' : undefined} />
        <span class="field-help">${problem || 'Workspaces inside follow the new path and keep their ids.'}</span>
      </label>
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${action.busy || !!problem || name === dir.name}>
          ${action.busy ? 'Renaming…' : 'Rename'}</button>
      </div>
    </form>
  <//>`;
}

function RemoveFolderDialog({ dir, path, backend, onClose, onDone }) {
  const [ask, setAsk] = useState(null);
  const action = useAction();
  const remove = (stop) => action.run(() => withStop(async (s) => {
    await hub.removeFolder(path, s || stop, backend);
    await refresh();
    announce(`Folder ${dir.name} removed`);
    onClose();
    onDone();
  }, setAsk));
  if (ask) {
    return html`<${Confirm} title="Stop the workspace to remove?" confirm="Stop and remove" danger busy=${action.busy}
      error=${action.error} onClose=${onClose} onConfirm=${() => remove(true)}
      body=${html`<p>The folder holds the running workspace ${stopNames(ask)}. It stops, and its registration goes
        with the folder.</p>`} />`;
  }
  return html`<${Confirm} title=${`Remove ${dir.name}?`} confirm="Remove" danger busy=${action.busy} error=${action.error}
    onClose=${onClose} onConfirm=${() => remove(false)}
    body=${html`<p>Only an empty folder can be removed (a hidden file counts as content).
      ${dir.registeredId ? ' Its workspace registration is removed with it.' : ''}</p><p><code>${path}</code></p>`} />`;
}

function Register({ path, backend }) {
  const [name, setName] = useState(baseName(path));
  const [startNow, setStartNow] = useState(true);
  const [ask, setAsk] = useState(false);
  const [result, setResult] = useState(null);
  const action = useAction();
  useEffect(() => { setName(baseName(path)); setResult(null); action.setError(null); }, [path]);
  const configure = (init) => action.run(async () => {
    try {
      const res = await hub.configure({ path, backend, displayName: name.trim(), start: startNow, init });
      await refresh();
      setAsk(false);
      announce(`${res.workspace.displayName} added`);
      if (res.startError || res.recoveryRequired) setResult(res);
      else navigate(wsPath(res.workspace.id));
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && e.body?.needsInit) {
        setAsk(true);
        return;
      }
      setAsk(false);
      throw e;
    }
  });
  const submit = (e) => { e.preventDefault(); configure(false); };
  return html`<section class="card pad" aria-labelledby="register-title">
    <h2 id="register-title">Register this folder</h2>
    <p class="muted"><code>${path}</code></p>
    <form onSubmit=${submit}>
      <label class="field"><span class="field-label">Display name</span>
        <input value=${name} maxlength="200" onInput=${(e) => setName(e.currentTarget.value)} required /></label>
      <label class="check"><input type="checkbox" checked=${startNow} onChange=${(e) => setStartNow(e.currentTarget.checked)} />
        Start it now</label>
      <${ErrorNote} error=${action.error} />
      ${result ? html`<p class="note note-warn" role="status">Registered as
        <${Link} href=${wsPath(result.workspace.id)}>${result.workspace.displayName}<//>, but
        ${result.startError ? html`it did not start: ${result.startError}` : html`the Hub needs a restart to settle it: ${result.recoveryRequired}`}</p>` : null}
      <button class="btn btn-primary" type="submit" disabled=${action.busy || !name.trim()}>${action.busy ? 'Registering…' : 'Register'}</button>
    </form>
    ${ask ? html`<${Confirm} title="Initialize a Git repository?" confirm="Run git init and register" busy=${action.busy}
      error=${action.error} onClose=${() => setAsk(false)} onConfirm=${() => configure(true)}
      body=${html`<p><code>${path}</code> is not a Git repository. Wharf can run <code>git init</code> in it and
        register it; nothing else in the folder changes.</p>`} />` : null}
  </section>`;
}

function CreateRepository({ parent, backend }) {
  const [folder, setFolder] = useState('');
  const [name, setName] = useState('');
  const [touched, setTouched] = useState(false);
  const [startNow, setStartNow] = useState(true);
  const [retained, setRetained] = useState('');
  const action = useAction();
  const problem = folder ? folderNameProblem(folder) : '';
  const display = touched ? name : folder;
  const submit = (e) => {
    e.preventDefault();
    const p = folderNameProblem(folder);
    if (p) { action.setError(new Error(p)); return; }
    setRetained('');
    action.run(async () => {
      try {
        const res = await hub.createRepository({ parent, backend, folderName: folder, displayName: display.trim() || folder,
          start: startNow });
        await refresh();
        announce(`${res.workspace.displayName} created`);
        navigate(wsPath(res.workspace.id));
      } catch (err) {
        if (err instanceof ApiError && err.body?.retainedPath) setRetained(err.body.retainedPath);
        throw err;
      }
    });
  };
  return html`<section class="card pad" aria-labelledby="create-title">
    <h2 id="create-title">Create a new repository here</h2>
    <p class="muted">A new folder inside <code>${parent}</code>, with <code>git init</code>, registered as a workspace.</p>
    <form onSubmit=${submit}>
      <label class="field"><span class="field-label">Folder name</span>
        <input value=${folder} spellcheck=${false} autocapitalize="none" onInput=${(e) => setFolder(e.currentTarget.value)}
          aria-invalid=${problem ? 'true' : undefined} />
        ${problem ? html`<span class="field-help field-problem">${problem}</span>` : null}</label>
      <label class="field"><span class="field-label">Display name</span>
        <input value=${display} maxlength="200" onInput=${(e) => { setTouched(true); setName(e.currentTarget.value); }} /></label>
      <label class="check"><input type="checkbox" checked=${startNow} onChange=${(e) => setStartNow(e.currentTarget.checked)} />
        Start it now</label>
      <${ErrorNote} error=${action.error} />
      ${retained ? html`<p class="note note-warn">The repository was kept at <code>${retained}</code>.
        <${Link} href=${addPath(retained, backend)}>Open it to register it<//>.</p>` : null}
      <button class="btn" type="submit" disabled=${action.busy || !folder || !!problem}>${action.busy ? 'Creating…' : 'Create repository'}</button>
    </form>
  </section>`;
}
