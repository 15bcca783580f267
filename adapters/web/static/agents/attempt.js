// A browser or device login in progress (AgentAccountAttempt), and how it
// ended. While pending: the page to open (a link to a new tab, without
// referrer or opener: only http and https addresses become links), the
// agent's instructions, then by its completion: a code input (`code`),
// the address the browser landed on (`redirect`), or the code to enter
// on that page while the page waits for the approval (`device`); and
// Cancel. Settled: logged in, failed with the agent's (redacted)
// message, expired or cancelled.
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { accounts } from '../api.js';
import { announce } from '../announce.js';
import { ErrorNote, Spinner, relTime, useAction, useNow } from '../ui.js';
import { fieldOf, linkOf } from './accounts.js';
import { CopyText, Plain } from './forms.js';

const settledWords = {
  complete: 'logged in',
  failed: 'login failed',
  expired: 'login expired',
  cancelled: 'login cancelled',
};

/**
 * Attempt shows attempt at of target t (its method named label); focus
 * moves to its heading when it starts (autoFocus), so the next step is
 * where the reader is. onDismiss hides a settled one.
 */
export function Attempt({ a, t, at, label, acc, autoFocus, onDismiss }) {
  const head = useRef(null);
  const headId = useId();
  const was = useRef(at.state);
  useEffect(() => {
    if (autoFocus && at.state === 'pending' && head.current) head.current.focus();
  }, [at.id]);
  useEffect(() => {
    if (was.current === 'pending' && at.state !== 'pending') announce(`${a.name}: ${settledWords[at.state] || at.state}`);
    was.current = at.state;
  }, [at.state]);
  const title = at.state === 'pending' ? `Logging in to ${t.name}` : `Login to ${t.name}`;
  return html`<section class=${'attempt attempt-' + at.state} aria-labelledby=${headId} data-attempt=${at.id}>
    <h4 class="attempt-title" id=${headId} ref=${head} tabindex="-1">${title} <span class="muted">· ${label}</span></h4>
    ${at.state === 'pending' ? html`<${Pending} at=${at} acc=${acc} />` : html`<${Settled} at=${at} onDismiss=${onDismiss} />`}
  </section>`;
}

function Settled({ at, onDismiss }) {
  let note;
  switch (at.state) {
    case 'complete':
      note = html`<p class="note note-ok" role="status">✓ Logged in.</p>`;
      break;
    case 'failed':
      note = html`<${ErrorNote} error=${{ message: `The login failed${at.message ? ': ' + at.message : '.'}` }} />`;
      break;
    case 'expired':
      note = html`<p class="note note-warn" role="status">The login expired before it was finished; start it again.</p>`;
      break;
    default:
      note = html`<p class="note note-info" role="status">The login was cancelled${at.message && at.message !== 'Cancelled.' ? `: ${at.message}` : '.'}</p>`;
  }
  return html`${note}
    ${onDismiss ? html`<button type="button" class="btn btn-sm btn-quiet" onClick=${onDismiss}>Dismiss</button>` : null}`;
}

function Pending({ at, acc }) {
  const now = useNow(30000);
  const cancel = useAction();
  const link = linkOf(at.url);
  const doCancel = () => cancel.run(async () => {
    acc.apply(await accounts.cancel(at.id));
    announce('Login cancelled');
  });
  return html`
    ${at.instructions ? html`<p class="attempt-instructions">${at.instructions}</p>` : null}
    ${link ? html`<p><a class="btn btn-primary" href=${link} target="_blank" rel="noopener noreferrer">Open the login page</a></p>`
      : at.url ? html`<p class="note note-warn">The agent gave an address that is not a web page: <code>${at.url}</code></p>` : null}
    ${at.completion === 'device' ? html`<${Device} at=${at} />` : null}
    ${at.completion === 'code' ? html`<${CodeForm} at=${at} acc=${acc} />` : null}
    ${at.completion === 'redirect' ? html`<${RedirectForm} at=${at} acc=${acc} />` : null}
    <div class="attempt-foot">
      <span class="muted small">Expires <time datetime=${new Date(at.expiresAt).toISOString()}>${relTime(at.expiresAt, now)}</time>.</span>
      <button type="button" class="btn btn-sm btn-quiet" disabled=${cancel.busy} onClick=${doCancel}>Cancel</button>
    </div>
    <${ErrorNote} error=${cancel.error} />`;
}

function Device({ at }) {
  return html`${at.userCode ? html`<p class="small">Enter this code on that page:</p>
      <${CopyText} text=${at.userCode} label="Code to enter" big=${true} />` : null}
    <p class="muted attempt-wait" role="status"><${Spinner} label="" /> Waiting for you to approve on that page…</p>`;
}

/**
 * useSubmit sends what the person pasted (send(value) answers the
 * listing), clearing the input whatever the answer; a login no longer
 * in progress (404) reads the listing again, which shows why.
 */
function useSubmit(acc, send) {
  const [value, setValue] = useState('');
  const action = useAction();
  const submit = (e) => {
    e.preventDefault();
    const v = value.trim();
    setValue('');
    if (!v) return;
    action.run(async () => {
      try {
        acc.apply(await send(v));
        acc.submitted();
      } catch (err) {
        if (err.status === 404) acc.reload();
        throw err;
      }
    });
  };
  return { value, setValue, action, submit };
}

function CodeForm({ at, acc }) {
  const s = useSubmit(acc, (code) => accounts.code(at.id, code));
  return html`<form class="acct-form" onSubmit=${s.submit} autocomplete="off">
    <${Plain} label="The code the page shows" name="code" value=${s.value} set=${s.setValue} err=${s.action.error} field="code"
      help="After you log in, the page shows a code: copy it here." />
    ${fieldOf(s.action.error) !== 'code' ? html`<${ErrorNote} error=${s.action.error} />` : null}
    <button type="submit" class="btn btn-primary" disabled=${s.action.busy}>${s.action.busy ? 'Submitting…' : 'Submit'}</button>
  </form>`;
}

function RedirectForm({ at, acc }) {
  const s = useSubmit(acc, (address) => accounts.redirect(at.id, address));
  return html`<form class="acct-form" onSubmit=${s.submit} autocomplete="off">
    <p class="small">After logging in, your browser lands on a page that does not load: it is an address of the Hub machine
      (<code>http://localhost…</code>), which this device cannot reach. That is expected. Copy that page's whole address
      from the address bar here, and the Hub finishes the login.</p>
    <${Plain} label="The address of that page" name="address" value=${s.value} set=${s.setValue} err=${s.action.error} field="address"
      inputMode="url" />
    ${fieldOf(s.action.error) !== 'address' ? html`<${ErrorNote} error=${s.action.error} />` : null}
    <button type="submit" class="btn btn-primary" disabled=${s.action.busy}>${s.action.busy ? 'Submitting…' : 'Submit'}</button>
  </form>`;
}
