// A conversation's page (/w/{id}/c/{conversationId}): its title, status,
// agent, model and mode, the context window's use, the transcript as it
// streams, and the composer. The page follows the conversation through
// chat/store.js; it is a chunk of its own, loaded the first time a
// conversation is opened. Opening it acknowledges a finished workspace,
// as the workspace's page does.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { chat, hub } from '../api.js';
import { Link, navigate, wsPath } from '../router.js';
import { activityOf, follow, refresh, useModel, workspace } from '../model.js';
import { announce } from '../announce.js';
import { Badge, Confirm, ErrorNote, Icon, NameDialog, NoSuchWorkspace, NotAnswering, Spinner, statusOf, useAction, usePageTitle } from '../ui.js';
import { useAcknowledge } from '../pages/workspace.js';
import { AgentLogin, busy, convStatus, convTitle, useAgents } from '../pages/conversations.js';
import { pendingRequest } from './convstate.js';
import { useConversation } from './store.js';
import { Item } from './items.js';
import { Composer } from './composer.js';

export function ConversationPage({ id, cid }) {
  const m = useModel();
  const ws = workspace(id);
  const store = useConversation(id, cid);
  const agents = useAgents(id);
  const st = store.state;
  usePageTitle(st ? convTitle(st.conversation) : 'Conversation');
  useEffect(() => {
    follow(id, false);
    return () => follow('');
  }, [id]);
  const act = activityOf(id);
  useAcknowledge(id, act?.finished);
  const stopped = ws && statusOf(ws, act).key === 'stopped';

  const back = html`<${Link} href=${wsPath(id)} class="back"><${Icon} name="up" size=${16} />${ws ? ws.displayName : 'Workspace'}<//>`;
  if (!m.state) return html`<main class="page" id="main"><h1 tabindex="-1">Conversation</h1><${Spinner} /></main>`;
  if (!ws) {
    return html`<${NoSuchWorkspace} id=${id} />`;
  }
  if (store.phase === 'gone') {
    return html`<main class="page" id="main">${back}<h1 tabindex="-1">No such conversation</h1>
      <p>This conversation was closed, or never was. <${Link} href=${wsPath(id)}>Back to ${ws.displayName}<//>.</p></main>`;
  }
  if (!st) {
    return html`<main class="page page-conv" id="main">${back}<h1 tabindex="-1">Conversation</h1>
      ${stopped ? html`<${StartNote} ws=${ws} store=${store} />`
        : store.error ? html`<${ErrorNote} error=${store.error} />` : html`<p class="muted" role="status"><${Spinner} label="" /> Opening the conversation…</p>`}
    </main>`;
  }
  const running = busy(st.conversation.status);
  return html`<main class="page page-conv" id="main">
    ${back}
    <${Head} ws=${ws} cid=${cid} st=${st} agents=${agents} />
    <${Phase} ws=${ws} store=${store} stopped=${stopped} />
    <${Transcript} ws=${id} cid=${cid} st=${st} version=${st.version} running=${running} />
    <${LoginNote} agents=${agents} agentId=${st.conversation.agent?.id} />
    <${Composer} ws=${id} cid=${cid} running=${running} queued=${st.queued} />
  </main>`;
}

/** StartNote says the workspace is stopped, with a way to start it and reopen the conversation. */
function StartNote({ ws, store }) {
  const action = useAction();
  const start = () => action.run(async () => {
    await hub.start(ws.id);
    announce(`${ws.displayName} started`);
    await refresh();
    store.retryNow();
  });
  return html`<p class="note note-info">This workspace is stopped: start it to go on with the conversation.
    <button type="button" class="btn btn-sm" disabled=${action.busy} onClick=${start}>${action.busy ? 'Starting…' : 'Start'}</button></p>
    <${ErrorNote} error=${action.error} />`;
}

/** Phase says when what the page shows may be behind. */
function Phase({ ws, store, stopped }) {
  if (stopped) return html`<${StartNote} ws=${ws} store=${store} />`;
  if (store.phase === 'refreshing') return html`<p class="note note-info" role="status"><${Spinner} label="" /> Catching up…</p>`;
  if (store.phase === 'unavailable') {
    return html`<${NotAnswering} />`;
  }
  if (store.error) return html`<${ErrorNote} error=${store.error} />`;
  return null;
}

/**
 * LoginNote offers the agent's login in place while the workspace says
 * the conversation's agent wants one; it goes once the agents, read
 * again, say otherwise.
 */
function LoginNote({ agents, agentId }) {
  const a = (agents.value || []).find((x) => x.id === agentId);
  if (!a || a.availability !== 'login-required') return null;
  return html`<section class="note note-warn conv-login" aria-label="Login required">
    <span>${a.name || a.id} wants a login on the Hub machine before it can go on.</span>
    <${AgentLogin} a=${a} onLoggedIn=${agents.reload} />
  </section>`;
}

function Head({ ws, cid, st, agents }) {
  const c = st.conversation;
  const awaiting = !!pendingRequest(st);
  const [dialog, setDialog] = useState('');
  return html`<div class="conv-head">
    <div class="conv-head-main">
      <h1 tabindex="-1" class="conv-h1">${convTitle(c)}</h1>
      <${Badge} status=${convStatus(c.status, awaiting)} />
      <span class="conv-actions">
        <button type="button" class="btn btn-sm btn-quiet" onClick=${() => setDialog('rename')}>Rename</button>
        <button type="button" class="btn btn-sm btn-quiet btn-danger-quiet" onClick=${() => setDialog('close')}>Close</button>
      </span>
    </div>
    <div class="conv-head-meta">
      <span class="conv-agent"><${Icon} name="chat" size=${14} />${c.agent?.name || c.agent?.id}</span>
      <${Config} ws=${ws.id} cid=${cid} agentId=${c.agent?.id} cfg=${st.configuration} agents=${agents} />
      <${ContextWindow} it=${contextWindow(st)} />
    </div>
    ${dialog === 'rename' ? html`<${Rename} ws=${ws.id} cid=${cid} title=${c.title} onClose=${() => setDialog('')} />` : null}
    ${dialog === 'close' ? html`<${Close} ws=${ws} cid=${cid} title=${convTitle(c)} onClose=${() => setDialog('')} />` : null}
  </div>`;
}

/** Config picks the conversation's model and mode, when its agent offers any. */
function Config({ ws, cid, agentId, cfg, agents }) {
  const action = useAction();
  const a = (agents.value || []).find((x) => x.id === agentId);
  if (!a || (!a.models.length && !a.modes.length)) return null;
  const set = (change) => action.run(async () => {
    await chat.configure(ws, cid, change);
    announce('Configuration changed');
  });
  const select = (label, field, list) => (list.length ? html`<label class="conv-select">
    <span class="sr-only">${label}</span>
    <select aria-label=${label} disabled=${action.busy} onChange=${(e) => set({ [field]: e.currentTarget.value })}>
      ${!cfg[field] ? html`<option value="" selected disabled>${label}: as the agent chooses</option>` : null}
      ${cfg[field] && !list.some((o) => o.id === cfg[field]) ? html`<option value=${cfg[field]} selected>${cfg[field]}</option>` : null}
      ${list.map((o) => html`<option key=${o.id} value=${o.id} selected=${cfg[field] === o.id}>${o.name || o.id}</option>`)}
    </select></label>` : null);
  return html`<span class="conv-config">
    ${select('Model', 'model', a.models)}
    ${select('Mode', 'mode', a.modes)}
    ${action.error ? html`<${ErrorNote} error=${action.error} />` : null}
  </span>`;
}

const contextWindow = (st) => {
  for (const id of st.order) if (st.items.get(id).kind === 'context_window') return st.items.get(id);
  return null;
};

/** ContextWindow is how much of the agent's context window the conversation uses, and its cost. */
function ContextWindow({ it }) {
  if (!it || !Number.isFinite(it.used) || !Number.isFinite(it.size) || it.size <= 0) return null;
  const pct = Math.min(100, (it.used / it.size) * 100);
  const words = `${it.used.toLocaleString('en-US')} of ${it.size.toLocaleString('en-US')} tokens`;
  return html`<span class="ctx" title=${`Context window: ${words}`}>
    <meter min="0" max=${it.size} value=${it.used} aria-label="Context window used"></meter>
    <span class="ctx-words">${pct < 1 ? '<1' : Math.round(pct)}% of context · ${words}${Number.isFinite(it.costUsd) ? ` · $${it.costUsd.toFixed(2)}` : ''}</span>
  </span>`;
}

function Rename({ ws, cid, title, onClose }) {
  return html`<${NameDialog} title="Rename conversation" label="Title" initial=${title} maxlength="400"
    help="Only you and your devices see it." onClose=${onClose}
    problem=${(t) => !t ? 'A title cannot be empty.' : new TextEncoder().encode(t).length > 200 ? 'A title holds at most 200 bytes.' : ''}
    save=${async (t) => {
      await chat.rename(ws, cid, t);
      announce(`Renamed to ${t}`);
    }} />`;
}

function Close({ ws, cid, title, onClose }) {
  const action = useAction();
  const go = () => action.run(async () => {
    await chat.close(ws.id, cid);
    announce(`${title} closed`);
    onClose();
    navigate(wsPath(ws.id));
  });
  return html`<${Confirm} title=${`Close ${title}?`} confirm="Close" danger busy=${action.busy} error=${action.error}
    onConfirm=${go} onClose=${onClose}
    body=${html`<p>Its turn stops and it leaves the list of conversations. The agent keeps its own session.</p>`} />`;
}

/**
 * Transcript is the items in order. It keeps the newest in view while
 * the reader is at the bottom, and leaves the scroll alone once they
 * scroll up to read.
 */
function Transcript({ ws, cid, st, version, running }) {
  const stick = useRef(true);
  useEffect(() => {
    const fn = () => { stick.current = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120; };
    window.addEventListener('scroll', fn, { passive: true });
    return () => window.removeEventListener('scroll', fn);
  }, []);
  useLayoutEffect(() => {
    if (stick.current) window.scrollTo(0, document.documentElement.scrollHeight);
  }, [version]);
  const last = st.order[st.order.length - 1];
  const status = st.conversation.status;
  const waiting = running && pendingRequest(st);
  return html`<section class="transcript-wrap" aria-label="Transcript">
    ${st.order.length ? html`<ol class="transcript">
      ${st.order.map((id) => html`<${Item} key=${id} it=${st.items.get(id)} ws=${ws} cid=${cid} streaming=${running && id === last} />`)}
    </ol>` : html`<p class="muted transcript-empty">Nothing said yet. Ask the agent something below: it works in this workspace's folder.</p>`}
    ${running ? html`<p class=${'working' + (waiting ? ' working-waits' : '')} role="status"><span class="dots" aria-hidden="true"><i></i><i></i><i></i></span>
      ${waiting ? `The agent waits for your answer to its ${waiting.kind === 'question' ? 'question' : 'request'}.`
        : status === 'compacting' ? 'Compacting the context…' : 'The agent is working…'}</p>` : null}
    ${st.statusMessage && !running && status !== 'failed' ? html`<p class="note note-info">${st.statusMessage}</p>` : null}
  </section>`;
}
