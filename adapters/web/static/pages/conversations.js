// A workspace's conversations with coding agents, on its page: the list
// (GET conversations, read again at the inventory topic's `ready` and at
// each of its events) with each one's status, which of them awaits the
// user, and "New conversation" with an agent picker (GET agents, read
// again when an agent's catalog revision in the inventory changes).
// The conversation itself is its own page (chat/page.js), loaded when
// opened. An agent that wants a login offers one in place (AgentLogin).
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { chat } from '../api.js';
import { Link, convPath, navigate } from '../router.js';
import { useModel } from '../model.js';
import { announce } from '../announce.js';
import { Badge, Dialog, Empty, ErrorNote, Icon, Spinner, relTime, useAction, useNow } from '../ui.js';

// Conversation statuses (ConversationStatus) as badges: [style, label].
const STATUSES = {
  idle: ['idle', 'New'],
  sending: ['working', 'Sending'],
  running: ['working', 'Working'],
  compacting: ['working', 'Compacting'],
  retrying: ['working', 'Retrying'],
  background: ['working', 'In the background'],
  scheduled: ['idle', 'Scheduled'],
  completed: ['finished', 'Done'],
  interrupted: ['stopped', 'Interrupted'],
  failed: ['failed', 'Failed'],
};

/** convStatus names a conversation's status for a Badge; awaiting comes first. */
export function convStatus(status, awaiting) {
  if (awaiting) return { key: 'awaiting', label: 'Awaiting you' };
  const [key, label] = STATUSES[status] || ['idle', String(status || 'unknown')];
  return { key, label };
}

/** busy reports whether a status means a turn is in flight. */
export const busy = (status) => status === 'running' || status === 'compacting' || status === 'sending' || status === 'retrying';

/** convTitle is a conversation's title, or words for an untitled one. */
export const convTitle = (c) => (c.title || '').trim() || `Conversation with ${c.agent?.name || c.agent?.id || 'an agent'}`;

/**
 * useLatest runs load() now and whenever key changes, one at a time: a
 * change while a load is in flight runs it once more afterwards. It
 * returns {value, error}; value keeps the last success.
 */
export function useLatest(load, key, enabled = true) {
  const [res, setRes] = useState({ value: null, error: null });
  const state = useRef({ running: false, again: false, alive: true });
  const loader = useRef(load);
  loader.current = load;
  useEffect(() => () => { state.current.alive = false; }, []);
  useEffect(() => {
    if (!enabled) return;
    const st = state.current;
    if (st.running) { st.again = true; return; }
    const run = async () => {
      st.running = true;
      do {
        st.again = false;
        try {
          const value = await loader.current();
          if (st.alive) setRes({ value, error: null });
        } catch (error) {
          if (st.alive) setRes((r) => ({ value: r.value, error }));
        }
      } while (st.again && st.alive);
      st.running = false;
    };
    run();
  }, [key, enabled]);
  return res;
}

/**
 * useAgents is the workspace's agents, read again whenever the inventory
 * names a catalog revision that differs from the one the list holds, and
 * when reload() asks (after a login).
 */
export function useAgents(wsId, enabled = true) {
  const m = useModel();
  const catalogs = m.inventory && m.inventory.ws === wsId ? m.inventory.catalogs : {};
  const [gen, setGen] = useState(0);
  const res = useLatest(() => chat.agents(wsId).then((r) => r.agents), `${wsId}#${gen}`, enabled);
  const stale = (res.value || []).some((a) => catalogs[a.id] && catalogs[a.id] !== a.catalogRevision);
  useEffect(() => { if (stale) setGen((n) => n + 1); }, [stale, JSON.stringify(catalogs)]);
  return { ...res, reload: () => setGen((n) => n + 1) };
}

/**
 * useAwaiting finds the conversations that await the user while the
 * workspace's activity says one does. A ConversationSummary does not say
 * whether it awaits, so this reads the snapshot of each conversation with
 * a turn in flight (at most six) and looks for a pending permission or
 * question.
 */
function useAwaiting(wsId, list, awaiting) {
  const running = awaiting && list ? list.filter((c) => busy(c.status)).slice(0, 6).map((c) => c.id) : [];
  const key = running.join('\n');
  const res = useLatest(async () => {
    const found = [];
    for (const id of running) {
      try {
        const snap = await chat.snapshot(wsId, id);
        if (snap.items.some((it) => (it.kind === 'permission' || it.kind === 'question') && it.state === 'pending')) found.push(id);
      } catch { /* gone meanwhile: not awaiting */ }
    }
    return found;
  }, `${wsId}#${key}#${awaiting}`, awaiting && running.length > 0);
  return new Set(awaiting && running.length ? res.value || [] : []);
}

/**
 * Conversations is the card of a workspace's conversations. With
 * goAwaiting (the list's "Awaiting you" link), it opens the conversation
 * that awaits as soon as it is known.
 */
export function Conversations({ ws, running, awaiting, goAwaiting }) {
  const m = useModel();
  const now = useNow();
  const inv = m.inventory && m.inventory.ws === ws.id ? m.inventory : null;
  const list = useLatest(() => chat.conversations(ws.id).then((r) => r.conversations), `${ws.id}#${inv?.ticks || 0}`, running);
  const convs = running ? list.value : null;
  const waiting = useAwaiting(ws.id, convs, running && awaiting);
  const [dialog, setDialog] = useState(false);
  const first = convs && convs.find((c) => waiting.has(c.id));
  useEffect(() => {
    if (goAwaiting && first) navigate(convPath(ws.id, first.id), { replace: true });
  }, [goAwaiting, first?.id]);

  let body;
  if (!running) {
    body = html`<p class="pad muted">Start the workspace to talk to its coding agents.</p>`;
  } else if (!convs && list.error) {
    body = html`<div class="pad"><${ErrorNote} error=${list.error} /></div>`;
  } else if (!convs) {
    body = html`<p class="pad muted" role="status"><${Spinner} label="" /> Reading the conversations…</p>`;
  } else if (!convs.length) {
    body = html`<${Empty} title="No conversations yet"><p>Start one with a coding agent: it works in this workspace's folder,
      and you follow, approve and answer from here.</p><//>`;
  } else {
    body = html`<ul class="conv-list" aria-label="Conversations">
      ${convs.map((c) => html`<${Row} key=${c.id} ws=${ws} c=${c} awaiting=${waiting.has(c.id)} now=${now} />`)}
    </ul>`;
  }
  return html`<section class="card convs" aria-labelledby="convs-title">
    <div class="card-head">
      <h2 id="convs-title">Conversations ${convs ? html`<span class="count">${convs.length}</span>` : null}</h2>
      ${running ? html`<button type="button" class="btn btn-sm btn-primary" onClick=${() => setDialog(true)}>
        <${Icon} name="plus" size=${16} />New conversation</button>` : null}
    </div>
    ${first ? html`<p class="pad-x note note-warn conv-await" role="status">
      <span><b>${convTitle(first)}</b> awaits your answer.</span>
      <${Link} href=${convPath(ws.id, first.id)} class="btn btn-sm">Open</${Link}></p>` : null}
    ${convs && list.error ? html`<div class="pad-x"><${ErrorNote} error=${list.error} /></div>` : null}
    ${body}
    ${dialog ? html`<${NewConversation} ws=${ws} onClose=${() => setDialog(false)} />` : null}
  </section>`;
}

function Row({ ws, c, awaiting, now }) {
  const st = convStatus(c.status, awaiting);
  const updated = typeof c.updatedAt === 'number' ? c.updatedAt : 0;
  return html`<li class=${'conv-row status-' + st.key} data-conv=${c.id}>
    <${Link} href=${convPath(ws.id, c.id)} class="conv-link">
      <span class="conv-title">${convTitle(c)}</span>
      <span class="conv-meta">${c.agent?.name || c.agent?.id}${updated ? html` · <time datetime=${new Date(updated).toISOString()}>${relTime(updated, now)}</time>` : null}</span>
    <//>
    <${Badge} status=${st} />
  </li>`;
}

/** availability says in words why an agent cannot be used, or ''. */
export function availability(a) {
  if (a.availability === 'not-installed') return 'Not installed: its command is not on the PATH of this workspace’s session.';
  if (a.availability === 'login-required') return 'Login required: it refused to work until it is logged in on the Hub machine.';
  return '';
}

// The login offered in place is in the Agents page's chunk, loaded the
// first time an agent wants a login.
let inlineLogin = null;

/**
 * AgentLogin offers agent a's login in place (agents/inline.js), and a
 * link to the Agents page until that is loaded (or if it cannot be).
 * onLoggedIn runs once a login completed.
 */
export function AgentLogin({ a, onLoggedIn }) {
  const [comp, setComp] = useState(() => inlineLogin);
  useEffect(() => {
    if (comp) return undefined;
    let live = true;
    import('../agents/inline.js').then((mod) => {
      inlineLogin = mod.AgentLoginInline;
      if (live) setComp(() => inlineLogin);
    }, () => {});
    return () => { live = false; };
  }, []);
  if (comp) return html`<${comp} agentId=${a.id} name=${a.name || a.id} onLoggedIn=${onLoggedIn} />`;
  return html`<p class="acct-inline"><${Link} href=${'/agents?agent=' + encodeURIComponent(a.id)}>Log ${a.name || a.id} in on the Agents page<//></p>`;
}

/** NewConversation picks an agent (and an optional title) and starts a conversation. */
function NewConversation({ ws, onClose }) {
  const agents = useAgents(ws.id);
  const [pick, setPick] = useState('');
  const [title, setTitle] = useState('');
  const action = useAction();
  const list = agents.value;
  const chosen = pick || (list && (list.find((a) => a.availability === 'available') || {}).id) || '';
  const submit = (e) => {
    e.preventDefault();
    if (!chosen) return;
    action.run(async () => {
      const { conversation } = await chat.create(ws.id, chosen, title.trim());
      announce(`Conversation started with ${conversation.agent?.name || chosen}`);
      onClose();
      navigate(convPath(ws.id, conversation.id));
    });
  };
  let picker;
  if (!list && agents.error) picker = html`<${ErrorNote} error=${agents.error} />`;
  else if (!list) picker = html`<p class="muted" role="status"><${Spinner} label="" /> Reading the agents…</p>`;
  else if (!list.length) picker = html`<p class="muted">This workspace knows no coding agent.</p>`;
  else {
    picker = html`<fieldset class="agents">
      <legend class="field-label">Agent</legend>
      ${list.map((a) => {
        const why = availability(a);
        return html`<label key=${a.id} class=${'agent' + (a.availability === 'not-installed' ? ' agent-off' : '')} data-agent=${a.id}>
          <input type="radio" name="agent" value=${a.id} checked=${chosen === a.id} disabled=${a.availability === 'not-installed'}
            onChange=${() => setPick(a.id)} />
          <span class="agent-main"><span class="agent-name">${a.name || a.id}</span>
            ${why ? html`<span class="agent-why">${why}</span>` : null}</span>
        </label>
        ${a.availability === 'login-required' ? html`<${AgentLogin} key=${'login:' + a.id} a=${a} onLoggedIn=${agents.reload} />` : null}`;
      })}
    </fieldset>`;
  }
  const none = list && !list.some((a) => a.availability !== 'not-installed');
  // The picker is outside the form: a login offered in it has forms of
  // its own (a code, an address), and forms do not nest.
  return html`<${Dialog} title="New conversation" onClose=${onClose}>
    <div class="dialog-body">
      ${picker}
      ${none ? html`<p class="field-help">Install a coding agent that speaks the Agent Client Protocol on the Hub machine
        (Claude Code, Codex, Gemini CLI or OpenCode), or name one with <code>wharf serve --agent</code>.</p>` : null}
      <form onSubmit=${submit}>
        <label class="field">
          <span class="field-label">Title <span class="muted">(optional)</span></span>
          <input value=${title} maxlength="200" onInput=${(e) => setTitle(e.currentTarget.value)} placeholder="The agent may name it" />
        </label>
        <${ErrorNote} error=${action.error} />
        <div class="dialog-actions">
          <button type="button" class="btn" onClick=${onClose}>Cancel</button>
          <button type="submit" class="btn btn-primary" disabled=${action.busy || !chosen}>${action.busy ? 'Starting…' : 'Start'}</button>
        </div>
      </form>
    </div>
  <//>`;
}
