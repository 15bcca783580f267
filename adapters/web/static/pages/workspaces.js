// The workspace list: every registered workspace with its live state
// (stopped, running, working, awaiting you, finished), its path and
// branch; start, stop, rename and forget from here.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { html } from '../html.js';
import { hub } from '../api.js';
import { Link, wsPath } from '../router.js';
import { activityOf, model, refresh, useModel } from '../model.js';
import { announce } from '../announce.js';
import { Badge, Confirm, Empty, ErrorNote, Icon, NameDialog, memo, statusOf, useAction, usePageTitle } from '../ui.js';
import { hostLabel } from './hosts.js';

let listReady = false;

export function WorkspacesPage() {
  usePageTitle('Workspaces');
  const m = useModel();
  const [filter, setFilter] = useState('');
  const all = m.state?.workspaces;
  const sorted = useMemo(() => (all ? [...all].sort((a, b) =>
    a.displayName.localeCompare(b.displayName, undefined, { sensitivity: 'base' }) || a.id.localeCompare(b.id)) : []), [all]);
  const f = filter.trim().toLowerCase();
  const grouped = useMemo(() => underParents(sorted), [sorted]);
  const shown = f ? grouped.filter((w) => w.displayName.toLowerCase().includes(f) || w.path.toLowerCase().includes(f)
    || (w.branch || '').toLowerCase().includes(f)) : grouped;

  useEffect(() => {
    // For the first-load measurement (adapters/web/perf): when the list
    // of workspaces first shows.
    if (!listReady && all) {
      listReady = true;
      performance.mark('wharf:list-ready');
    }
  }, [all]);

  let body;
  if (!m.state && m.stateError) {
    body = html`<${ErrorNote} error=${m.stateError} />
      <button class="btn" type="button" onClick=${() => refresh()}>Try again</button>`;
  } else if (!m.state) {
    body = html`<ul class="ws-list" aria-busy="true" aria-label="Loading workspaces">
      ${[0, 1, 2].map((i) => html`<li key=${i} class="ws-row skeleton"><span></span><span></span></li>`)}</ul>`;
  } else if (!sorted.length) {
    body = html`<${Empty} title="No workspaces yet">
      <p>A workspace is a folder on the Hub's machine, usually a Git repository. Add one and it appears here,
        with whether it runs and whether its agent needs you.</p>
      <p><${Link} href="/add" class="btn btn-primary"><${Icon} name="plus" /> Add a workspace<//></p>
      <p class="muted">Workspaces registered elsewhere (with curl, another device) show up here by themselves.</p>
    <//>`;
  } else {
    body = html`
      ${sorted.length > 6 ? html`<label class="field field-inline filter">
        <span class="sr-only">Filter workspaces</span>
        <input type="search" placeholder="Filter by name, path or branch" value=${filter}
          onInput=${(e) => setFilter(e.currentTarget.value)} />
      </label>` : null}
      ${m.stateError ? html`<${ErrorNote} error=${m.stateError} />` : null}
      <ul class="ws-list" aria-label="Workspaces">
        ${shown.map((w) => html`<${Row} key=${w.id} ws=${w} act=${activityOf(w.id)} child=${!!w.parentId && grouped.some((p) => p.id === w.parentId)} />`)}
      </ul>
      ${f && !shown.length ? html`<p class="muted">No workspace matches “${filter}”.</p>` : null}`;
  }
  return html`<main class="page" id="main">
    <div class="page-head">
      <h1 tabindex="-1">Workspaces ${all ? html`<span class="count">${all.length}</span>` : null}</h1>
      ${all && all.length ? html`<${Link} href="/add" class="btn btn-primary"><${Icon} name="plus" /><span>Add</span><//>` : null}
    </div>
    ${body}
  </main>`;
}

/**
 * underParents orders a sorted list so each linked worktree follows its
 * main workspace (its parent), itself in the list's order; a worktree
 * whose parent is not registered stays where it sorts.
 */
export function underParents(sorted) {
  const ids = new Set(sorted.map((w) => w.id));
  const children = new Map();
  for (const w of sorted) {
    if (w.parentId && ids.has(w.parentId)) {
      if (!children.has(w.parentId)) children.set(w.parentId, []);
      children.get(w.parentId).push(w);
    }
  }
  const out = [];
  for (const w of sorted) {
    if (w.parentId && ids.has(w.parentId)) continue;
    out.push(w, ...(children.get(w.id) || []));
  }
  return out;
}

const Row = memo(function Row({ ws, act, child }) {
  const status = statusOf(ws, act);
  const running = status.key !== 'stopped';
  const action = useAction();
  const [dialog, setDialog] = useState('');
  const toggle = () => action.run(async () => {
    await (running ? hub.stop(ws.id) : hub.start(ws.id));
    announce(`${ws.displayName} ${running ? 'stopped' : 'started'}`);
    await refresh();
  });
  return html`<li class=${'ws-row status-' + status.key + (child ? ' ws-child' : '')} data-ws=${ws.id}>
    <div class="ws-main">
      <div class="ws-title">
        <${Link} href=${wsPath(ws.id)} class="ws-name">${ws.displayName}<//>
        ${status.key === 'awaiting'
          ? html`<${Link} href=${wsPath(ws.id) + '?awaiting=1'} class="badge-link"
              aria-label=${`${ws.displayName} awaits you: open the conversation`}><${Badge} status=${status} /><//>`
          : html`<${Badge} status=${status} />`}
      </div>
      <div class="ws-meta">
        <span class="ws-path" title=${ws.path}><bdi>${ws.path}</bdi></span>
        ${hostLabel(ws.backend) ? html`<span class="ws-host tag" title=${`Lives on ${hostLabel(ws.backend)}`}>on ${hostLabel(ws.backend)}</span>` : null}
        ${ws.branch ? html`<span class="ws-branch"><${Icon} name="branch" size=${14} />${ws.branch}</span>` : null}
        ${ws.availability ? html`<span class="ws-warn">${ws.availability === 'missing' ? 'folder missing' : 'folder replaced'}</span>` : null}
        ${running && ws.credentialRestartRequired ? html`<span class="ws-warn">restart required</span>` : null}
      </div>
    </div>
    <div class="ws-actions">
      <button type="button" class="btn btn-sm" disabled=${action.busy} onClick=${toggle}
        aria-label=${`${running ? 'Stop' : 'Start'} ${ws.displayName}`}>
        <${Icon} name=${running ? 'stop' : 'play'} size=${16} />${action.busy ? (running ? 'Stopping…' : 'Starting…') : running ? 'Stop' : 'Start'}
      </button>
      <button type="button" class="btn btn-sm btn-quiet" onClick=${() => setDialog('rename')}
        aria-label=${`Rename ${ws.displayName}`}>Rename</button>
      ${running ? null : html`<button type="button" class="btn btn-sm btn-quiet" onClick=${() => setDialog('forget')}
        aria-label=${`Forget ${ws.displayName}`}>Forget</button>`}
    </div>
    ${action.error ? html`<div class="ws-error"><${ErrorNote} error=${action.error} /></div>` : null}
    ${dialog === 'rename' ? html`<${RenameDialog} ws=${ws} onClose=${() => setDialog('')} />` : null}
    ${dialog === 'forget' ? html`<${ForgetDialog} ws=${ws} onClose=${() => setDialog('')} />` : null}
  </li>`;
});

/** visibleLength counts what a person sees: code points, not UTF-16 units. */
const visibleLength = (s) => [...s].length;

export function RenameDialog({ ws, onClose }) {
  return html`<${NameDialog} title="Rename workspace" label="Display name" initial=${ws.displayName} maxlength="200"
    help="Only the name changes: the folder, the session and the id stay." onClose=${onClose}
    problem=${(t) => !t ? 'A display name cannot be empty.' : visibleLength(t) > 64 ? 'A display name holds at most 64 characters.' : ''}
    save=${async (t) => {
      await hub.rename(ws.id, t);
      await refresh();
      announce(`Renamed to ${t}`);
    }} />`;
}

export function ForgetDialog({ ws, onClose, onDone }) {
  const action = useAction();
  const go = () => action.run(async () => {
    await hub.forget(ws.id);
    model.activity.delete(ws.id);
    await refresh();
    announce(`${ws.displayName} forgotten`);
    onClose();
    if (onDone) onDone();
  });
  return html`<${Confirm} title=${`Forget ${ws.displayName}?`} confirm="Forget" danger busy=${action.busy} error=${action.error}
    onConfirm=${go} onClose=${onClose}
    body=${html`<p>Wharf stops listing it. The folder <code>${ws.path}</code> and its files stay where they are;
      you can add it again later.</p>`} />`;
}
