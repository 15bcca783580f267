// A repository's worktrees, on the page of its main workspace or of one
// of its worktrees: every checkout Git lists (GET /api/hub/worktrees,
// read again at each invalidation of the worktrees topic), with what
// can be done to each: open it, register a checkout made elsewhere,
// forget one (its files stay), and delete one the Hub made after a
// preflight that shows what would be lost. "New task" makes a branch's
// worktree, starts it and starts a conversation in it, in one flow.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { chat, worktrees } from '../api.js';
import { Link, convPath, navigate, wsPath } from '../router.js';
import { refresh, useModel, workspace } from '../model.js';
import { announce } from '../announce.js';
import { Dialog, ErrorNote, Icon, Spinner, useAction } from '../ui.js';
import { useLatest } from './conversations.js';

/** refusal turns a worktree answer with ok false into an Error to show. */
function refusal(res) {
  const e = new Error(res.error?.message || 'The Hub refused.');
  e.code = res.error?.code;
  e.retry = res.error?.retry;
  return e;
}

/** must returns res when it is ok, else throws its refusal. */
function must(res) {
  if (!res.ok) throw refusal(res);
  return res;
}

export function Worktrees({ ws }) {
  const m = useModel();
  const ticks = m.worktrees && m.worktrees.ws === ws.id ? m.worktrees.ticks : 0;
  const [gen, setGen] = useState(0);
  const inv = useLatest(() => worktrees.list(ws.id).then((r) => r.inventory), `${ws.id}#${ticks}#${gen}`);
  const [dialog, setDialog] = useState(null);
  const fetch = useAction();
  const reload = () => setGen((n) => n + 1);
  const v = inv.value;
  const source = v?.sourceWorkspaceId || ws.id;
  const trees = v ? v.checkouts.filter((c) => !c.main) : [];
  const doFetch = () => fetch.run(async () => {
    must(await worktrees.fetch(source));
    announce('Fetched the remote branches');
    reload();
  });
  let body;
  if (!v && inv.error) body = html`<div class="pad"><${ErrorNote} error=${inv.error} /></div>`;
  else if (!v) body = html`<p class="pad muted" role="status"><${Spinner} label="" /> Reading the worktrees…</p>`;
  else if (v.status === 'error') body = html`<p class="pad note note-info">${v.error?.message || 'The worktrees could not be read.'}</p>`;
  else if (!trees.length) {
    body = html`<p class="pad muted">No worktrees yet. A worktree is another checkout of this repository on a branch of its own:
      give each task one, and an agent works in each without getting in the others’ way.</p>`;
  } else {
    body = html`<ul class="wt-list" aria-label="Worktrees">${trees.map((c) => html`<${Tree} key=${c.checkoutId} c=${c}
      source=${source} onDelete=${() => setDialog({ kind: 'delete', c })} onChanged=${reload} />`)}</ul>`;
  }
  return html`<section class="card worktrees" aria-labelledby="wt-title">
    <div class="card-head">
      <h2 id="wt-title">Worktrees ${v ? html`<span class="count">${trees.length}</span>` : null}</h2>
      ${v && v.status === 'ready' ? html`<div class="wt-head-actions">
        <button type="button" class="btn btn-quiet" disabled=${fetch.busy} onClick=${doFetch}
          title="Fetch the remote branches with this workspace’s credentials">${fetch.busy ? 'Fetching…' : 'Fetch'}</button>
        <button type="button" class="btn btn-primary" onClick=${() => setDialog({ kind: 'new' })}>
          <${Icon} name="plus" size=${16} />New task</button>
      </div>` : null}
    </div>
    ${fetch.error ? html`<div class="pad-x"><${ErrorNote} error=${fetch.error} /></div>` : null}
    ${body}
    ${dialog?.kind === 'new' ? html`<${NewTask} source=${source} refs=${v.refs} checkouts=${v.checkouts} onClose=${() => setDialog(null)} />` : null}
    ${dialog?.kind === 'delete' ? html`<${DeleteTree} source=${source} c=${dialog.c}
      onClose=${() => setDialog(null)} onDone=${() => { setDialog(null); reload(); }} />` : null}
  </section>`;
}

/** ownershipWord says who made a checkout, when it is not the Hub. */
const ownershipWord = { external: 'Made elsewhere', uncertain: 'Identity uncertain' };

function Tree({ c, source, onDelete, onChanged }) {
  const action = useAction();
  const w = c.workspaceId ? workspace(c.workspaceId) : null;
  const act = (fn, said) => action.run(async () => {
    must(await fn());
    announce(said);
    await refresh();
    onChanged();
  });
  const present = c.availability === 'present';
  return html`<li class=${'wt-row' + (present ? '' : ' wt-gone')} data-branch=${c.branch || ''} data-checkout=${c.checkoutId}>
    <div class="wt-main">
      <div class="wt-title">
        <${Icon} name="branch" size=${16} />
        ${c.registered && present
          ? html`<${Link} href=${wsPath(c.workspaceId)} class="wt-name">${w?.displayName || c.branch || c.workspaceId}<//>`
          : html`<span class="wt-name">${c.branch || '(detached)'}</span>`}
        ${c.running ? html`<span class="badge badge-running"><span class="dot"></span>Running</span>` : null}
        ${c.availability === 'missing' ? html`<span class="badge badge-failed">Folder missing</span>` : null}
        ${c.availability === 'replaced' ? html`<span class="badge badge-failed">Another checkout is there</span>` : null}
        ${c.locked ? html`<span class="badge badge-stopped">Locked in Git</span>` : null}
        ${ownershipWord[c.ownership] ? html`<span class="badge badge-stopped">${ownershipWord[c.ownership]}</span>` : null}
      </div>
      <div class="wt-meta muted small"><bdi title=${c.path}>${c.path}</bdi>${c.sourceRef ? html` · from ${c.sourceRef}` : null}</div>
    </div>
    <div class="wt-actions">
      ${!c.registered && present && !c.detached && c.ownership !== 'uncertain' ? html`<button type="button" class="btn btn-quiet"
        disabled=${action.busy} onClick=${() => act(() => worktrees.register(source, c.checkoutId), `${c.branch} registered`)}>Register</button>` : null}
      ${c.registered ? html`<button type="button" class="btn btn-quiet" disabled=${action.busy}
        onClick=${() => act(() => worktrees.forget(source, c.workspaceId), `${c.branch || 'The worktree'} forgotten; its files stay`)}>Forget</button>` : null}
      ${c.ownership === 'wharf' && present ? html`<button type="button" class="btn btn-danger-quiet" onClick=${onDelete}>Delete</button>` : null}
    </div>
    ${action.error ? html`<div class="wt-error"><${ErrorNote} error=${action.error} /></div>` : null}
  </li>`;
}

/**
 * NewTask makes a worktree for a task — a new branch from a base, or an
 * existing branch — starts it, and starts a conversation with an agent
 * in it, then opens that conversation. When no agent can start, the new
 * workspace's page opens instead.
 */
function NewTask({ source, refs, checkouts, onClose }) {
  const inUse = new Set(checkouts.map((c) => c.branch).filter(Boolean));
  const main = checkouts.find((c) => c.main)?.branch;
  const [kind, setKind] = useState('new');
  const [branch, setBranch] = useState('');
  const [base, setBase] = useState(main && refs.local.includes(main) ? 'local:' + main : refs.local[0] ? 'local:' + refs.local[0] : '');
  const existing = [...refs.local.filter((b) => !inUse.has(b)).map((b) => 'local:' + b),
    ...refs.remote.filter((r) => !refs.local.includes(r.slice(r.indexOf('/') + 1))).map((r) => 'remote:' + r)];
  const [pick, setPick] = useState(existing[0] || '');
  const [converse, setConverse] = useState(true);
  const [step, setStep] = useState('');
  const action = useAction();
  const label = (v) => v.replace(/^local:/, '').replace(/^remote:/, '');
  const submit = (e) => {
    e.preventDefault();
    action.run(async () => {
      let req;
      if (kind === 'new') {
        const [k, ref] = [base.startsWith('remote:') ? 'remote' : 'local', label(base)];
        req = { sourceWorkspaceId: source, mode: 'new-branch', branch: branch.trim(), base: { kind: k, ref }, start: true };
      } else {
        const remote = pick.startsWith('remote:');
        req = { sourceWorkspaceId: source, mode: remote ? 'remote-tracking' : 'existing-local', base: { kind: remote ? 'remote' : 'local', ref: label(pick) }, start: true };
      }
      setStep('Creating the worktree…');
      const res = must(await worktrees.create(req));
      const id = res.checkout.workspaceId;
      await refresh();
      announce(`Worktree ${res.checkout.branch} created`);
      if (!converse || !res.started) {
        onClose();
        navigate(wsPath(id));
        return;
      }
      setStep('Starting a conversation…');
      const agents = (await chat.agents(id)).agents || [];
      const agent = agents.find((a) => a.availability === 'available');
      if (!agent) {
        onClose();
        navigate(wsPath(id));
        return;
      }
      const { conversation } = await chat.create(id, agent.id, res.checkout.branch);
      onClose();
      navigate(convPath(id, conversation.id));
    }).finally(() => setStep(''));
  };
  return html`<${Dialog} title="New task" onClose=${onClose}>
    <form class="dialog-body" onSubmit=${submit}>
      <p class="field-help">The task gets its own worktree and branch beside this repository, so its agent works without touching the others.</p>
      <div class="seg" role="group" aria-label="Branch">
        <button type="button" aria-pressed=${kind === 'new'} onClick=${() => setKind('new')}>New branch</button>
        <button type="button" aria-pressed=${kind === 'existing'} onClick=${() => setKind('existing')} disabled=${!existing.length}>Existing branch</button>
      </div>
      ${kind === 'new' ? html`
        <label class="field">
          <span class="field-label">Branch</span>
          <input name="branch" value=${branch} maxlength="64" required autofocus autocapitalize="off" autocorrect="off" spellcheck="false"
            placeholder="fix/login-timeout" onInput=${(e) => setBranch(e.currentTarget.value)} />
        </label>
        <label class="field">
          <span class="field-label">From</span>
          <select name="base" value=${base} onChange=${(e) => setBase(e.currentTarget.value)}>
            ${refs.local.map((b) => html`<option key=${'l' + b} value=${'local:' + b}>${b}</option>`)}
            ${refs.remote.map((r) => html`<option key=${'r' + r} value=${'remote:' + r}>${r}</option>`)}
          </select>
        </label>` : html`
        <label class="field">
          <span class="field-label">Branch</span>
          <select name="existing" value=${pick} onChange=${(e) => setPick(e.currentTarget.value)}>
            ${existing.map((v) => html`<option key=${v} value=${v}>${label(v)}</option>`)}
          </select>
        </label>`}
      <label class="check">
        <input type="checkbox" name="converse" checked=${converse} onChange=${(e) => setConverse(e.currentTarget.checked)} />
        Start a conversation with an agent in it
      </label>
      ${step ? html`<p class="muted" role="status"><${Spinner} label="" /> ${step}</p>` : null}
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${action.busy || (kind === 'new' ? !branch.trim() || !base : !pick)}>
          ${action.busy ? 'Creating…' : 'Create'}</button>
      </div>
    </form>
  </${Dialog}>`;
}

const categories = [
  ['tracked', 'Uncommitted changes'],
  ['untracked', 'Untracked files'],
  ['ignored', 'Ignored files and folders'],
];

/**
 * DeleteTree runs the preflight, shows the one thing that blocks the
 * deletion or what it would lose, and deletes only once the person has
 * acknowledged that, with the preflight's fingerprint: files changed
 * since are never removed (the Hub refuses, and the preflight runs again).
 */
function DeleteTree({ source, c, onClose, onDone }) {
  const [pre, setPre] = useState(null);
  const [ack, setAck] = useState(false);
  const check = useAction();
  const action = useAction();
  const ref = c.workspaceId || c.checkoutId;
  const run = () => check.run(async () => {
    setAck(false);
    setPre(await worktrees.preflight(source, ref));
  });
  useEffect(() => { run(); }, []);
  const ld = pre?.ok ? pre.localData : null;
  const remove = () => action.run(async () => {
    const res = await worktrees.remove(source, ref, !!pre.requiresStop, ld?.fingerprint);
    if (!res.ok && res.error?.retry === 'refresh') {
      await run();
      throw refusal(res);
    }
    must(res);
    announce(`Worktree ${c.branch} deleted; the branch stays`);
    await refresh();
    if (c.workspaceId && location.pathname === wsPath(c.workspaceId)) navigate(wsPath(source));
    onDone();
  });
  let body;
  if (!pre && check.error) body = html`<${ErrorNote} error=${check.error} />`;
  else if (!pre) body = html`<p class="muted" role="status"><${Spinner} label="" /> Checking the worktree…</p>`;
  else if (!pre.ok) body = html`<p class="note note-error" role="alert">${pre.error.message}</p>`;
  else {
    body = html`
      <p>This removes the folder <bdi class="wt-path">${c.path}</bdi> and its files. The branch <strong>${c.branch}</strong> stays.</p>
      ${pre.requiresStop ? html`<p class="note note-warn">The worktree is running: its session is stopped first.</p>` : null}
      ${ld ? html`<div class="wt-loss" role="group" aria-label="What would be lost">
        ${categories.filter(([k]) => ld[k]).map(([k, title]) => html`<div key=${k} class="wt-loss-cat" data-category=${k}>
          <h3>${title} <span class="count">${ld[k].count}</span></h3>
          <ul>${ld[k].sample.map((p) => html`<li key=${p}><code>${p}</code></li>`)}
            ${ld[k].count > ld[k].sample.length ? html`<li class="muted">and ${ld[k].count - ld[k].sample.length} more</li>` : null}</ul>
        </div>`)}
        <label class="check">
          <input type="checkbox" name="acknowledge" checked=${ack} onChange=${(e) => setAck(e.currentTarget.checked)} />
          Delete these too: they are in no commit
        </label>
      </div>` : html`<p class="muted">Nothing in it is uncommitted.</p>`}`;
  }
  return html`<${Dialog} title=${`Delete worktree ${c.branch || ''}`} onClose=${onClose}>
    <div class="dialog-body">${body}</div>
    <${ErrorNote} error=${action.error} />
    <div class="dialog-actions">
      <button type="button" class="btn" onClick=${onClose}>Cancel</button>
      <button type="button" class="btn btn-danger" disabled=${!pre?.ok || action.busy || check.busy || (ld && !ack)}
        onClick=${remove}>${action.busy ? 'Deleting…' : pre?.requiresStop ? 'Stop and delete' : 'Delete'}</button>
    </div>
  </${Dialog}>`;
}
