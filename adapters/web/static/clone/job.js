// A clone job's page, /clone/{jobId}: its phases (cloning → registering
// → starting), its terminal output as a terminal shows it, a box to
// answer what Git asks (masked when it asks for a password, a passphrase
// or a user name; the answer goes to the Hub and is cleared at once),
// Cancel, and the result: the new workspace, or what went wrong. The job
// id in the address is all a reload or another device needs: the page
// replays the job's events from the first, then follows it.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { clones, sentence } from '../api.js';
import { Link, wsPath } from '../router.js';
import { refresh, useModel } from '../model.js';
import { announce } from '../announce.js';
import { ErrorNote, Spinner, useAction, usePageTitle } from '../ui.js';
import { CloneStream } from '../clonestream.js';
import { Screen, secretPrompt } from './terminal.js';

const PHASES = [['cloning', 'Cloning'], ['registering', 'Registering'], ['starting', 'Starting']];

export function CloneJobPage({ id }) {
  usePageTitle('Clone');
  const screen = useRef(null);
  if (!screen.current) screen.current = new Screen();
  const [, redraw] = useState(0);
  const [phase, setPhase] = useState('');
  const [sawStart, setSawStart] = useState(false);
  const [result, setResult] = useState(null);
  const [status, setStatus] = useState({ state: 'connecting' });
  const [gone, setGone] = useState(false);

  useEffect(() => {
    const s = new CloneStream(id, {
      onEvent: (name, data) => {
        if (name === 'output' && typeof data.output === 'string') {
          screen.current.write(data.output);
          redraw((n) => n + 1);
        } else if (name === 'phase') {
          setPhase(data.phase);
          if (data.phase === 'starting') setSawStart(true);
        } else if (name === 'result') {
          setResult(data);
          if (data.workspaceId) refresh().catch(() => {});
          announce(data.status === 'succeeded' ? 'Clone finished' : 'Clone ended');
        }
      },
      onStatus: setStatus,
      onGone: () => setGone(true),
    });
    s.connect();
    return () => s.close();
  }, [id]);

  if (gone && !result) {
    return html`<main class="page page-clone" id="main"><h1 tabindex="-1">Clone</h1>
      <p class="note note-info clone-gone" role="status">The Hub does not know this clone job (any more): a finished job's
        result is kept for 5 minutes, and jobs end when the Hub restarts.</p>
      <p><${Link} href="/">Your workspaces<//> · <${Link} href="/clone">Clone a repository<//></p></main>`;
  }
  const steps = sawStart ? PHASES : PHASES.slice(0, 2);
  const at = steps.findIndex(([p]) => p === phase);
  return html`<main class="page page-clone" id="main">
    <div class="page-head"><h1 tabindex="-1">Clone</h1>
      ${result ? null : html`<${Cancel} id=${id} />`}</div>
    <ol class="phases" aria-label="Progress">
      ${steps.map(([p, label], i) => {
        // The step a job ended in is done only when it succeeded.
        const ended = result?.status === 'succeeded' ? 'done' : 'failed';
        const state = result ? (i < at ? 'done' : i === at ? ended : 'skipped') : i < at ? 'done' : i === at ? 'current' : 'todo';
        return html`<li key=${p} class=${'phase phase-' + state} data-phase=${p}
          aria-current=${state === 'current' ? 'step' : undefined}>${label}</li>`;
      })}
      <li class=${'phase phase-' + (result ? (result.status === 'succeeded' ? 'done' : 'failed') : 'todo')} data-phase="result">
        ${result ? resultWord(result) : 'Done'}</li>
    </ol>
    ${status.state === 'reconnecting' ? html`<p class="note note-warn" role="status">${status.message} Reconnecting…</p>` : null}
    ${result ? html`<${Result} r=${result} />` : null}
    <${Terminal} screen=${screen.current} waiting=${!result && status.state !== 'live'} />
    ${result || !phase ? null : html`<${Answer} id=${id} prompt=${screen.current.prompt()} open=${phase === 'cloning'} />`}
  </main>`;
}

function resultWord(r) {
  switch (r.status) {
    case 'succeeded': return 'Done';
    case 'cancelled': return 'Cancelled';
    case 'timed-out': return 'Timed out';
    default: return 'Failed';
  }
}

/** Terminal shows the output, following it while it is scrolled to the end. */
function Terminal({ screen, waiting }) {
  const ref = useRef(null);
  const stick = useRef(true);
  const text = screen.text();
  useEffect(() => {
    const el = ref.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [text]);
  const scrolled = (e) => {
    const el = e.currentTarget;
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
  };
  return html`<section class="card term-card" aria-label="Git's output">
    ${screen.dropped ? html`<p class="muted small term-note">The first ${screen.dropped} lines are no longer shown.</p>` : null}
    <pre class="term" ref=${ref} onScroll=${scrolled} tabindex="0" role="log" aria-live="off">${text}${
      waiting && !text ? html`<${Spinner} label="Connecting" />` : null}</pre>
  </section>`;
}

/**
 * Answer sends one answer to what Git asks. The answer lives in the
 * field only while it is typed: it is cleared before it is sent, and
 * kept nowhere else.
 */
function Answer({ id, prompt, open }) {
  const ref = useRef(null);
  const action = useAction();
  const secret = secretPrompt(prompt);
  const submit = (e) => {
    e.preventDefault();
    const el = ref.current;
    const value = el.value;
    el.value = '';
    action.run(async () => {
      await clones.input(id, value);
      announce('Answer sent');
    });
  };
  return html`<form class="card pad answer" onSubmit=${submit} autocomplete="off">
    <label class="field"><span class="field-label">Answer Git${secret ? ' (hidden)' : ''}</span>
      <input ref=${ref} name="answer" type=${secret ? 'password' : 'text'} autocomplete="off" spellcheck=${false}
        autocapitalize="none" disabled=${!open} />
      <span class="field-help">${open ? 'What you type goes to the clone\'s terminal, followed by Enter. It is not kept or shown.'
        : 'Git is not asking anything now.'}</span></label>
    <${ErrorNote} error=${action.error} />
    <button type="submit" class="btn" disabled=${!open || action.busy}>Send</button>
  </form>`;
}

function Cancel({ id }) {
  const action = useAction();
  const [said, setSaid] = useState('');
  const cancel = () => action.run(async () => {
    const r = await clones.cancel(id);
    setSaid(r.status === 'cancelled' ? 'Cancelled.' : 'The clone had already finished.');
    announce(r.status === 'cancelled' ? 'Clone cancelled' : 'The clone had already finished');
  });
  return html`<div class="clone-cancel">
    <button type="button" class="btn btn-danger-quiet" disabled=${action.busy} onClick=${cancel}>
      ${action.busy ? 'Cancelling…' : 'Cancel clone'}</button>
    ${said ? html`<span class="muted small" role="status">${said}</span>` : null}
    <${ErrorNote} error=${action.error} />
  </div>`;
}

function Result({ r }) {
  const m = useModel();
  const ws = r.workspaceId ? m.state?.workspaces.find((w) => w.id === r.workspaceId) : null;
  const open = r.workspaceId ? html`<${Link} class="btn btn-primary" href=${wsPath(r.workspaceId)}>
    Open ${ws ? ws.displayName : 'the workspace'}<//>` : null;
  switch (r.status) {
    case 'succeeded':
      return html`<div class="card pad clone-result result-ok" role="status">
        <p>Cloned into <code>${r.target}</code> and registered${r.running ? ', and it is running' : ''}.</p>${open}</div>`;
    case 'start-failed':
      return html`<div class="card pad clone-result result-warn" role="status">
        <p>Cloned into <code>${r.target}</code>, but it did not start: ${sentence(r.error)}</p>${open}</div>`;
    case 'cancelled':
      return html`<div class="card pad clone-result result-stop" role="status"><p>The clone was cancelled. Nothing was registered.</p>
        <p class="muted small">Target: <code>${r.target}</code></p></div>`;
    case 'timed-out':
      return html`<div class="card pad clone-result result-stop" role="status"><p>${r.reason === 'lifetime'
        ? 'The clone timed out: it ran for 60 minutes, the longest a clone may.'
        : 'The clone timed out: 10 minutes passed without output or an answer.'}</p>
        <p class="muted small">Target: <code>${r.target}</code></p></div>`;
    default:
      return html`<div class="card pad clone-result result-fail">
        <p class="note note-error" role="alert">${sentence(r.error || 'The clone failed')}</p>
        <p class="muted small">Target: <code>${r.target}</code></p>
        <p><${Link} href="/clone">Try another clone<//></p></div>`;
  }
}
