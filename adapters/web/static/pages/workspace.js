// One workspace's page: its state and actions, its conversations with
// coding agents (pages/conversations.js), its files as a tree and its Git
// state (branch, changed files, recent commits), all from the live
// stream, so they change as agents work and files are saved. Opening the
// page acknowledges a `finished` workspace.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { html } from '../html.js';
import { hub } from '../api.js';
import { Link, navigate } from '../router.js';
import { activityOf, follow, refresh, useModel, workspace } from '../model.js';
import { announce } from '../announce.js';
import { Badge, Empty, ErrorNote, Icon, NoSuchWorkspace, NotAnswering, Spinner, relTime, statusOf, useAction, useNow, usePageTitle } from '../ui.js';
import { ForgetDialog, RenameDialog } from './workspaces.js';
import { buildTree, changeIndex } from '../tree.js';
import { Conversations } from './conversations.js';
import { WorkspaceCredentials } from './wscredentials.js';
import { Worktrees } from './worktrees.js';
import { TerminalSection } from '../terminal/section.js';
import { hostLabel } from './hosts.js';

export function WorkspacePage({ id, query }) {
  const m = useModel();
  const ws = workspace(id);
  usePageTitle(ws ? ws.displayName : 'Workspace');
  useEffect(() => {
    follow(id);
    return () => follow('');
  }, [id]);
  const act = activityOf(id);
  useAcknowledge(id, act?.finished);

  if (!ws) {
    if (!m.state) return html`<main class="page" id="main"><h1 tabindex="-1">Workspace</h1><${Spinner} /></main>`;
    return html`<${NoSuchWorkspace} id=${id} />`;
  }
  const status = statusOf(ws, act);
  return html`<main class="page page-ws" id="main">
    <${Link} href="/" class="back"><${Icon} name="up" size=${16} />Workspaces<//>
    <${Head} ws=${ws} status=${status} />
    <${Conversations} ws=${ws} running=${status.key !== 'stopped'} awaiting=${!!act?.awaiting}
      goAwaiting=${query?.get('awaiting') === '1'} />
    <${TerminalSection} ws=${ws} running=${status.key !== 'stopped'} />
    ${ws.createWorktree || ws.parentId ? html`<${Worktrees} ws=${ws} />` : null}
    <${Documents} ws=${ws} running=${status.key !== 'stopped'} doc=${m.doc && m.doc.ws === id ? m.doc : null} version=${m.doc?.doc.version} />
  </main>`;
}

/**
 * useAcknowledge tells the Hub the user has seen a finished workspace
 * (hubAcknowledgeWorkspaceActivity): when the page opens on one, and when
 * one finishes while the page is in view.
 */
export function useAcknowledge(id, finished) {
  const [visible, setVisible] = useState(!document.hidden);
  useEffect(() => {
    const fn = () => setVisible(!document.hidden);
    document.addEventListener('visibilitychange', fn);
    return () => document.removeEventListener('visibilitychange', fn);
  }, []);
  useEffect(() => {
    if (finished && visible) hub.activityViewed(id).catch(() => { /* shown as still finished; tried again next time */ });
  }, [id, finished, visible]);
}

function Head({ ws, status }) {
  const running = status.key !== 'stopped';
  const action = useAction();
  const [dialog, setDialog] = useState('');
  const toggle = () => action.run(async () => {
    await (running ? hub.stop(ws.id) : hub.start(ws.id));
    announce(`${ws.displayName} ${running ? 'stopped' : 'started'}`);
    await refresh();
  });
  return html`<div class="ws-head">
    <div class="ws-head-main">
      <h1 tabindex="-1" class="ws-h1">${ws.displayName}</h1>
      <${Badge} status=${status} />
    </div>
    <div class="ws-meta">
      <span class="ws-path" title=${ws.path}><bdi>${ws.path}</bdi></span>
        ${hostLabel(ws.backend) ? html`<span class="ws-host tag" title=${`Lives on ${hostLabel(ws.backend)}`}>on ${hostLabel(ws.backend)}</span>` : null}
      ${ws.branch ? html`<span class="ws-branch"><${Icon} name="branch" size=${14} />${ws.branch}</span>` : null}
      ${!running && ws.endedReason ? html`<span class="ws-warn" role="status">${ws.endedReason}</span>` : null}
      ${ws.parentId ? html`<span class="ws-parent">worktree of <${Link} href=${'/w/' + encodeURIComponent(ws.parentId)}>${workspace(ws.parentId)?.displayName || ws.parentId}<//></span>` : null}
    </div>
    <div class="ws-actions">
      <button type="button" class=${'btn ' + (running ? '' : 'btn-primary')} disabled=${action.busy} onClick=${toggle}>
        <${Icon} name=${running ? 'stop' : 'play'} size=${16} />${action.busy ? (running ? 'Stopping…' : 'Starting…') : running ? 'Stop' : 'Start'}
      </button>
      <button type="button" class="btn btn-quiet" onClick=${() => setDialog('rename')}>Rename</button>
      ${running ? null : html`<button type="button" class="btn btn-quiet" onClick=${() => setDialog('forget')}>Forget</button>`}
    </div>
    <${ErrorNote} error=${action.error} />
    <${WorkspaceCredentials} ws=${ws} running=${running} />
    ${dialog === 'rename' ? html`<${RenameDialog} ws=${ws} onClose=${() => setDialog('')} />` : null}
    ${dialog === 'forget' ? html`<${ForgetDialog} ws=${ws} onClose=${() => setDialog('')} onDone=${() => navigate('/')} />` : null}
  </div>`;
}

function Documents({ ws, running, doc }) {
  const d = doc?.doc;
  const has = !!d?.epoch;
  let notice = null;
  if (!running) {
    notice = html`<p class="note note-info">This workspace is stopped. Start it to see its files and Git state live.</p>`;
  } else if (!has || doc.status === 'waiting') {
    notice = html`<p class="note note-info" role="status"><${Spinner} label="" /> Connecting to the workspace…</p>`;
  } else if (doc.status === 'unavailable') {
    notice = html`<${NotAnswering} />`;
  } else if (doc.status === 'refreshing') {
    notice = html`<p class="note note-info" role="status"><${Spinner} label="" /> Catching up…</p>`;
  } else if (d.header.discovery?.status === 'indexing') {
    notice = html`<p class="note note-info" role="status"><${Spinner} label="" /> Indexing… ${d.header.discovery.discovered} files found so far.</p>`;
  } else if (d.header.discovery?.status === 'error') {
    notice = html`<p class="note note-error" role="alert">The workspace could not list its files${d.header.discovery.message ? ': ' + d.header.discovery.message : '.'}</p>`;
  }
  if (!has) return html`<section class="docs">${notice}</section>`;
  return html`<section class="docs">
    ${notice}
    <div class="ws-grid">
      <${Files} d=${d} version=${d.version} wsId=${ws.id} />
      <${Git} d=${d} version=${d.version} />
    </div>
  </section>`;
}

function Files({ d, version, wsId }) {
  const [only, setOnly] = useState('all');
  const [err, setErr] = useState(null);
  useEffect(() => {
    hub.personalState(wsId).then((s) => { if (s.filesFilter) setOnly(s.filesFilter); }).catch(setErr);
  }, [wsId]);
  const pick = (v) => {
    setOnly(v);
    hub.patchPersonalState(wsId, { filesFilter: v }).catch(setErr);
  };
  const changes = useMemo(() => changeIndex(d), [version]);
  const tree = useMemo(() => buildTree(d, only === 'changed' ? changes : null), [version, only]);
  const latest = d.header.latestChange?.id || '';
  const count = d.roots.reduce((n, r) => n + r.docs.size, 0);
  return html`<section class="card files" aria-labelledby="files-title">
    <div class="card-head">
      <h2 id="files-title">Files <span class="count">${count}</span></h2>
      <div class="seg" role="group" aria-label="Show">
        <button type="button" aria-pressed=${only === 'all'} onClick=${() => pick('all')}>All</button>
        <button type="button" aria-pressed=${only === 'changed'} onClick=${() => pick('changed')}>Changed</button>
      </div>
    </div>
    ${err ? html`<div class="pad"><${ErrorNote} error=${err} /></div>` : null}
    ${tree.children.length
      ? html`<ul class="tree" aria-label="Files">${tree.children.map((n) => html`<${Node} key=${n.key} n=${n} changes=${changes} latest=${latest} depth=${0} />`)}</ul>`
      : html`<${Empty} title=${only === 'changed' ? 'No changed files' : 'No files yet'}><p class="muted">${only === 'changed'
        ? 'Everything matches the last commit.' : 'Files appear here as soon as they are saved in the folder.'}</p><//>`}
  </section>`;
}

function Node({ n, changes, latest, depth }) {
  if (n.children) {
    return html`<li class="tree-dir">
      <details open=${depth < 2}>
        <summary><${Icon} name="folder" size=${16} /><span class="tree-name">${n.name}</span></summary>
        <ul>${n.children.map((c) => html`<${Node} key=${c.key} n=${c} changes=${changes} latest=${latest} depth=${depth + 1} />`)}</ul>
      </details>
    </li>`;
  }
  const ch = changes.get(n.id);
  const fresh = n.id === latest;
  return html`<li class=${'tree-file' + (fresh ? ' fresh' : '') + (ch ? ' changed' : '')} data-path=${n.path}
    title=${n.mtimeMs ? 'Saved ' + relTime(n.mtimeMs) : undefined}>
    <${Icon} name="file" size=${16} /><span class="tree-name">${n.name}</span>
    ${ch ? html`<${Change} status=${ch.status} />` : null}
  </li>`;
}

const changeLetters = { modified: 'M', added: 'A', deleted: 'D', renamed: 'R', copied: 'C', untracked: 'U', unmerged: '!', 'type-changed': 'T' };

/** Change is a changed file's status as one letter, named in full for screen readers. */
function Change({ status }) {
  return html`<span class=${'chg chg-' + status} title=${status}><span aria-hidden="true">${changeLetters[status] || '•'}</span><span class="sr-only">${status}</span></span>`;
}

function Git({ d }) {
  const now = useNow();
  const repos = d.header.repositories || [];
  const rs = d.header.repositoryState;
  return html`<section class="git" aria-labelledby="git-title">
    <h2 id="git-title" class="sr-only">Git</h2>
    ${rs && rs.status !== 'ready' ? html`<p class=${'note ' + (rs.status === 'error' ? 'note-error' : 'note-info')} role="status">
      ${rs.status === 'pending' ? 'Reading Git state…' : rs.status === 'stale' ? 'Git state is being refreshed.' : 'Git state could not be read'}${rs.message ? ': ' + rs.message : ''}</p>` : null}
    ${!repos.length ? html`<div class="card pad"><p class="muted">Not a Git repository.</p></div>` : null}
    ${repos.map((r) => html`<${Repo} key=${r.id} r=${r} now=${now} multi=${repos.length > 1} />`)}
  </section>`;
}

function Repo({ r, now, multi }) {
  const md = r.metadata || {};
  const branch = md.branch || (md.detached ? `detached at ${md.headShort || '?'}` : null);
  return html`<div class="repo">
    <section class="card" aria-label=${multi ? `Changes in ${r.label}` : 'Changes'}>
      <div class="card-head">
        <h3>Changes <span class="count">${r.changedFiles.length}</span></h3>
        ${branch ? html`<span class="ws-branch"><${Icon} name="branch" size=${14} />${branch}</span>` : null}
      </div>
      ${md.upstream ? html`<p class="pad-x muted small">${md.upstream}: ${md.ahead ?? 0} ahead, ${md.behind ?? 0} behind</p>` : null}
      ${r.status !== 'available' ? html`<p class="pad muted">${r.status === 'non-git' ? 'Not a Git repository.' : 'Git state unavailable'}${r.message ? ': ' + r.message : ''}</p>` : null}
      ${r.status === 'available' && !r.changedFiles.length ? html`<p class="pad muted">No uncommitted changes.</p>` : null}
      ${r.changedFiles.length ? html`<ul class="changes">${r.changedFiles.map((f) => html`<li key=${f.path}>
        <${Change} status=${f.status} />
        <span class="change-path" title=${f.oldPath ? `${f.oldPath} → ${f.path}` : f.path}>${f.path}</span>
        ${f.additions != null ? html`<span class="plus">+${f.additions}</span><span class="minus">−${f.deletions}</span>` : null}
      </li>`)}</ul>` : null}
    </section>
    <section class="card" aria-label="Recent commits">
      <div class="card-head"><h3>Recent commits</h3></div>
      ${r.commitLog.length ? html`<ol class="commits">${r.commitLog.slice(0, 30).map((c) => html`<li key=${c.sha}>
        <span class="commit-subject">${c.subject}</span>
        <span class="commit-meta"><code>${c.sha}</code>${c.author ? ` · ${c.author}` : ''}${' · '}<time datetime=${new Date(c.committedAtMs).toISOString()} title=${new Date(c.committedAtMs).toLocaleString()}>${relTime(c.committedAtMs, now)}</time>${c.signature ? html` <${Signature} status=${c.signature.status} />` : null}</span>
      </li>`)}</ol>` : html`<p class="pad muted">No commits yet.</p>`}
    </section>
  </div>`;
}

// Signature marks a signed commit: verified when the workspace's own
// signing key (the one the Hub lends it) made the signature.
function Signature({ status }) {
  const verified = status === 'verified';
  return html`<span class=${`sig ${verified ? 'sig-ok' : 'sig-unknown'}`}
    title=${verified ? "Signed with this workspace's signing key" : 'Signed, but not by this workspace’s signing key'}>${verified ? 'Verified' : 'Unverified'}</span>`;
}
