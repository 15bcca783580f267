// Uses of credentials waiting for their owner, on every page. A workspace
// session's login, signature or token whose assignment asks first
// (usePolicy ask-once or ask-every-time) is held by the Hub for at most 2
// minutes (hubListCredentialApprovals); this banner, under the header and
// never in the way of the page, lists each with the workspace, the
// credential and what it is for, and allows or denies it
// (hubDecideCredentialApproval). There is no live topic for approvals:
// the list is read every few seconds while the dashboard is visible, one
// request at a time (usePoll), and at once after each answer. A new
// waiting use is announced to screen readers; nothing steals the focus.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { ApiError, creds } from './api.js';
import { Link, wsPath } from './router.js';
import { useModel, workspace } from './model.js';
import { announce } from './announce.js';
import { ErrorNote, Icon, useAction, useNow, usePoll } from './ui.js';

/** How often the waiting uses are read while the dashboard is visible. */
const POLL_MS = 3000;

/** The use policies, with words for people (the Assign dialog, the rows). */
export const policies = [
  ['always', 'Always', 'Every use is allowed, and logged.'],
  ['ask-once', 'Ask once per session', 'The first login, signature or token of each kind in a session waits for you here.'],
  ['ask-every-time', 'Ask every time', 'Every use waits for you to allow it here.'],
];

/** policyName names a use policy for people. */
export const policyName = (p) => policies.find((x) => x[0] === p)?.[1] || p;

/** purposeText says what a use is for, in words. */
export function purposeText(purpose, host) {
  if (purpose === 'git-signature') return 'sign a commit';
  if (purpose === 'ssh-login') return host ? `log in to ${host} over SSH` : 'log in over SSH';
  if (purpose === 'token') return host ? `a token for ${host}` : 'a token';
  return purpose;
}

/** wsName names workspace id for people (its id once it is gone). */
export const wsName = (id) => workspace(id)?.displayName || id;

const decidedListeners = new Set();

/**
 * onDecided calls fn after each answer given here (a use log on the page
 * reads itself again); it returns the function that stops that.
 */
export function onDecided(fn) {
  decidedListeners.add(fn);
  return () => decidedListeners.delete(fn);
}

const rtf = typeof Intl !== 'undefined' && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, { numeric: 'always' }) : null;

/** since says how long ago ms was, to the second under a minute. */
export function since(ms, now) {
  const s = Math.max(0, Math.round((now - ms) / 1000));
  const [n, unit] = s < 60 ? [s, 'second'] : [Math.floor(s / 60), 'minute'];
  return rtf ? rtf.format(-n, unit) : `${n} ${unit}${n === 1 ? '' : 's'} ago`;
}

export function Approvals() {
  useModel(); // the workspaces' names
  const [list, setList] = useState([]);
  const [gone, setGone] = useState('');
  const seen = useRef(new Set());
  const focusAt = useRef(-1); // where the focus goes once an answered use has left the list
  const poll = usePoll(async () => {
    const { approvals } = await creds.approvals();
    for (const a of approvals) {
      if (!seen.current.has(a.id)) announce(`${wsName(a.workspaceId)} asks to use ${a.credentialName}: ${purposeText(a.purpose, a.host)}`);
    }
    seen.current = new Set(approvals.map((a) => a.id));
    setList(approvals);
  }, POLL_MS);
  useEffect(() => {
    const i = focusAt.current;
    if (i < 0) return;
    focusAt.current = -1;
    const rows = document.querySelectorAll('.approval');
    const next = rows.length ? rows[Math.min(i, rows.length - 1)].querySelector('button') : document.querySelector('main h1');
    if (next) next.focus();
  }, [list]);
  const answered = (a, why) => {
    const i = list.findIndex((x) => x.id === a.id);
    if (document.activeElement?.closest('.approval')) focusAt.current = i;
    setList((l) => l.filter((x) => x.id !== a.id));
    if (why) setGone(why);
    for (const fn of decidedListeners) fn();
    poll();
  };
  if (!list.length && !gone) return null;
  return html`<section class="approvals" aria-labelledby="approvals-title">
    ${list.length ? html`<h2 id="approvals-title" class="approvals-title"><${Icon} name="key" size=${16} />
      ${list.length === 1 ? 'A workspace asks to use a credential' : `${list.length} uses of credentials wait for you`}</h2>
      <ul class="approval-list">${list.map((a) => html`<${Waiting} key=${a.id} a=${a} answered=${answered} />`)}</ul>`
      : html`<h2 id="approvals-title" class="sr-only">Credential uses</h2>`}
    ${gone ? html`<p class="note note-info approvals-gone" role="status"><span>${gone}</span>
      <button type="button" class="btn btn-sm btn-quiet" onClick=${() => setGone('')} aria-label="Dismiss">
        <${Icon} name="x" size=${16} /></button></p>` : null}
  </section>`;
}

/** Waiting is one held use, with its two answers. */
function Waiting({ a, answered }) {
  const action = useAction();
  const now = useNow(1000);
  const ws = wsName(a.workspaceId);
  const what = purposeText(a.purpose, a.host);
  const decide = (allow) => action.run(async () => {
    try {
      await creds.decide(a.id, allow);
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        const why = `${ws}'s use of ${a.credentialName} no longer waits: it was answered elsewhere, it timed out, or its session ended.`;
        announce(why);
        answered(a, why);
        return;
      }
      throw e;
    }
    announce(`${allow ? 'Allowed' : 'Denied'}: ${ws}, ${a.credentialName}, ${what}`);
    answered(a, '');
  });
  const allowLabel = `Allow ${ws} to use ${a.credentialName}: ${what}`;
  const denyLabel = `Deny ${ws} the use of ${a.credentialName}: ${what}`;
  return html`<li class="approval" data-approval=${a.id}>
    <p class="approval-text"><${Link} href=${wsPath(a.workspaceId)}>${ws}<//> wants <strong>${a.credentialName}</strong> <span
      class="approval-what">— ${what}</span> <time class="muted small" datetime=${a.requestedAt}
      title=${new Date(a.requestedAt).toLocaleString()}>${since(Date.parse(a.requestedAt), now)}</time></p>
    <div class="approval-actions">
      <button type="button" class="btn btn-sm btn-primary" disabled=${action.busy} onClick=${() => decide(true)}
        aria-label=${allowLabel}>Allow</button>
      <button type="button" class="btn btn-sm btn-danger-quiet" disabled=${action.busy} onClick=${() => decide(false)}
        aria-label=${denyLabel}>Deny</button>
    </div>
    ${action.error ? html`<div class="approval-error"><${ErrorNote} error=${action.error} /></div>` : null}
  </li>`;
}
