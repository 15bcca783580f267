// The Agents page (/agents): each coding agent of the Hub machine with
// its login state, version and vendor account, and per provider its
// saved logins and the ways to log in (hubGetAgentAccounts and the
// operations of the agent-accounts tag). A login lands in the agent's
// own store on the Hub machine and applies to every workspace and every
// Hub user; the page keeps no key, code or address. /agents?agent=id
// (&target=id) opens it at that agent (and provider): the conversation
// pages link here when an agent wants a login.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { Empty, ErrorNote, Spinner, usePageTitle } from '../ui.js';
import { busyState, useAccounts } from './accounts.js';
import { Target } from './target.js';

/** Agents with more providers than this list only those in use; the others are picked from a list. */
const MANY_TARGETS = 4;

/** Vendor account sources (AgentVendorAccount.source), for people. */
const sourceWords = {
  subscription: 'Subscription',
  console: 'Console (API billing)',
  'api-key': 'API key',
  'env-api-key': 'API key from the environment',
  'env-token': 'Token from the environment',
  'api-key-helper': 'API key helper',
  'third-party': 'Third-party provider',
  none: 'Not logged in',
  unknown: 'Unknown',
};

/** stateBadge names an agent's state (AgentAccountStatus.state) for a badge. */
function stateBadge(a) {
  switch (a.state) {
    case 'ready': return { key: 'running', label: 'Ready' };
    case 'not-installed': return { key: 'stopped', label: 'Not installed' };
    case 'unavailable': return { key: 'failed', label: 'Unavailable' };
  }
  return { key: 'working', label: 'Starting' };
}

export function AgentsPage({ query }) {
  usePageTitle('Agents');
  const acc = useAccounts();
  const [dismissed, setDismissed] = useState(() => new Set());
  const dismiss = (id) => setDismissed((s) => new Set(s).add(id));
  const focus = query?.get('agent') || '';
  const focusTarget = query?.get('target') || '';
  const snap = acc.snap;
  return html`<main class="page page-agents" id="main">
    <div class="page-head"><h1 tabindex="-1">Agents ${snap ? html`<span class="count">${snap.agents.length}</span>` : null}</h1></div>
    <p class="lead">Log the coding agents of the Hub machine in, from here. A login lands in the agent's own store on the Hub
      machine and serves every workspace and every Hub user; Wharf keeps no key, code or token.</p>
    ${acc.error ? html`<${ErrorNote} error=${acc.error} />${!snap ? html`<button class="btn" type="button" onClick=${acc.reload}>Try again</button>` : null}` : null}
    ${!snap && !acc.error ? html`<p role="status"><${Spinner} label="Reading the agents" /></p>` : null}
    ${snap && !snap.agents.length ? html`<${Empty} title="No agents to log in">
      <p>This Hub knows no coding agent it can log in. Agents log in with their own command line on the Hub machine.</p><//>` : null}
    ${snap && snap.agents.length ? html`<div class="acct-list">
      ${snap.agents.map((a) => html`<${Agent} key=${a.agent} a=${a} acc=${acc} focused=${a.agent === focus}
        focusTarget=${a.agent === focus ? focusTarget : ''} dismissed=${dismissed} dismiss=${dismiss} />`)}
    </div>` : null}
  </main>`;
}

function Agent({ a, acc, focused, focusTarget, dismissed, dismiss }) {
  const head = useRef(null);
  const headId = 'agent-' + a.agent;
  useEffect(() => {
    if (!focused || !head.current) return;
    head.current.scrollIntoView({ block: 'start' });
    head.current.focus({ preventScroll: true });
  }, [focused]);
  const badge = stateBadge(a);
  return html`<section class=${'card acct-agent' + (focused ? ' acct-focused' : '')} aria-labelledby=${headId} data-agent=${a.agent}>
    <div class="card-head">
      <div class="acct-agent-title">
        <h2 id=${headId} ref=${head} tabindex="-1">${a.name || a.agent}</h2>
        <span class=${'badge badge-' + badge.key}><span class="dot" aria-hidden="true"></span>${badge.label}</span>
        ${a.version ? html`<span class="muted small acct-version">${a.version}</span>` : null}
      </div>
    </div>
    <div class="pad">
      <${AgentBody} a=${a} acc=${acc} focusTarget=${focusTarget} dismissed=${dismissed} dismiss=${dismiss} />
    </div>
  </section>`;
}

function AgentBody({ a, acc, focusTarget, dismissed, dismiss }) {
  if (busyState(a)) {
    return html`<p class="muted" role="status"><${Spinner} label="" /> Starting ${a.name}'s login interface…</p>`;
  }
  if (a.state === 'not-installed') {
    return html`<p class="note note-warn">${a.message || `${a.name} is not installed on the Hub machine.`}</p>
      <p class="small">Install it on the Hub machine (its command is <code>${a.command}</code>), then log it in here, or in a terminal
        there with <code>${a.loginCommand}</code>.</p>`;
  }
  if (a.state === 'unavailable') {
    return html`<${ErrorNote} error=${{ message: a.message || `${a.name}'s login interface is not available.` }} />
      <button type="button" class="btn btn-sm" onClick=${acc.reload}>Try again</button>`;
  }
  return html`
    ${a.account ? html`<${Account} acct=${a.account} />` : null}
    ${!a.capabilities.login ? html`<p class="note note-info">${a.name} cannot be logged in from here: run
      <code>${a.loginCommand}</code> in a terminal on the Hub machine.</p>` : null}
    <${Targets} a=${a} acc=${acc} focusTarget=${focusTarget} dismissed=${dismissed} dismiss=${dismiss} />`;
}

function Account({ acct }) {
  const who = [acct.email, acct.organization].filter(Boolean).join(', ');
  const how = [sourceWords[acct.source] || acct.source, acct.provider, acct.plan].filter(Boolean).join(' · ');
  return html`<p class="acct-account"><span class="muted">Account</span> ${who ? html`<b>${who}</b> · ` : null}${how}</p>`;
}

/**
 * Targets shows every provider of an agent that has few; of one that
 * has many (OpenCode), those with a saved login or a login underway and
 * the one asked for, and a list to pick another from.
 */
function Targets({ a, acc, focusTarget, dismissed, dismiss }) {
  const [picked, setPicked] = useState('');
  const ts = a.targets;
  if (!ts.length) return html`<p class="muted small">${a.name} names no provider to log in to.</p>`;
  const one = ts.length === 1;
  const render = (t) => html`<${Target} key=${t.id} a=${a} t=${t} acc=${acc} dismissed=${dismissed} dismiss=${dismiss} heading=${!one} />`;
  if (ts.length <= MANY_TARGETS) return ts.map(render);
  const busy = new Set((acc.snap?.attempts || []).filter((at) => at.agent === a.agent).map((at) => at.target));
  const shown = ts.filter((t) => t.connected || t.credentials.length || busy.has(t.id) || t.id === focusTarget || t.id === picked);
  const others = ts.filter((t) => !shown.includes(t));
  return html`${shown.map(render)}
    ${others.length ? html`<label class="field acct-pick"><span class="field-label">Log in to another provider</span>
      <select value="" onChange=${(e) => setPicked(e.currentTarget.value)}>
        <option value="">Choose a provider…</option>
        ${others.map((t) => html`<option key=${t.id} value=${t.id}>${t.name || t.id}</option>`)}
      </select></label>` : null}`;
}
