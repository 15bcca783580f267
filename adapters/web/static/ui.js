// Small shared pieces of the pages: status badges, error and empty
// states, confirmation dialogs, relative times, icons.
import { Component, h } from 'preact';
import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { html } from './html.js';
import { Link } from './router.js';

/**
 * statusOf names a workspace's state for people, from its live activity
 * when the stream has said something, else from the Hub state.
 * Awaiting comes first: it is the one that needs the user.
 */
export function statusOf(ws, act) {
  const running = act ? act.running : ws.running;
  if (!running) return { key: 'stopped', label: 'Stopped' };
  if (act?.awaiting) return { key: 'awaiting', label: 'Awaiting you' };
  if (act?.working) return { key: 'working', label: 'Working' };
  if (act?.finished) return { key: 'finished', label: 'Finished' };
  return { key: 'running', label: 'Running' };
}

export function Badge({ status }) {
  return html`<span class=${'badge badge-' + status.key}><span class="dot" aria-hidden="true"></span>${status.label}</span>`;
}

/**
 * ErrorNote shows an error in words, announced to screen readers. A
 * refusal for too many attempts (429) says how long to wait, counting
 * down from its Retry-After.
 */
export function ErrorNote({ error, children }) {
  if (!error && !children) return null;
  return html`<p class="note note-error" role="alert">${error ? error.message || String(error) : null}${
    error?.status === 429 && error.retryAfter > 0 ? html` <${RetryWait} error=${error} />` : null}${children}</p>`;
}

/** RetryWait counts down the Retry-After of a 429 answer, from when it came. */
function RetryWait({ error }) {
  const until = useMemo(() => Date.now() + error.retryAfter * 1000, [error]);
  const now = useNow(1000);
  const secs = Math.max(0, Math.ceil((until - now) / 1000));
  return html`<span class="retry-wait">${secs > 0 ? `Wait ${secs} s before trying again.` : 'You can try again now.'}</span>`;
}

export function Spinner({ label = 'Loading' }) {
  return html`<span class="spinner" role="status" aria-label=${label}></span>`;
}

/**
 * useAction runs one async action at a time for a button or a form and
 * keeps its busy state and its error, so nothing fails silently.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const alive = useRef(true);
  useEffect(() => () => { alive.current = false; }, []);
  const run = async (fn) => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      if (alive.current) setError(e);
      return undefined;
    } finally {
      if (alive.current) setBusy(false);
    }
  };
  return { busy, error, setError, run };
}

/**
 * Dialog is a modal native <dialog>: focus moves into it and stays there,
 * Escape cancels, and focus returns to where it was when it closes.
 */
export function Dialog({ title, onClose, children, labelledBy = 'dialog-title' }) {
  const ref = useRef(null);
  useEffect(() => {
    const d = ref.current;
    const back = document.activeElement;
    d.showModal();
    const auto = d.querySelector('[autofocus]');
    if (auto) auto.focus();
    return () => {
      if (d.open) d.close();
      if (back && back.isConnected) back.focus();
    };
  }, []);
  const cancel = (e) => { e.preventDefault(); onClose(); };
  return html`<dialog ref=${ref} class="dialog" aria-labelledby=${labelledBy} onCancel=${cancel}>
    <h2 id=${labelledBy} class="dialog-title">${title}</h2>
    ${children}
  </dialog>`;
}

/** Confirm asks before an action; its error shows inside it. */
export function Confirm({ title, body, confirm, danger, busy, error, onConfirm, onClose }) {
  return html`<${Dialog} title=${title} onClose=${onClose}>
    <div class="dialog-body">${body}</div>
    <${ErrorNote} error=${error} />
    <div class="dialog-actions">
      <button type="button" class="btn" onClick=${onClose}>Cancel</button>
      <button type="button" class=${'btn ' + (danger ? 'btn-danger' : 'btn-primary')} autofocus
        disabled=${busy} onClick=${onConfirm}>${busy ? 'Working…' : confirm}</button>
    </div>
  </${Dialog}>`;
}

/** NoSuchWorkspace is the page of a workspace id nothing is registered as. */
export function NoSuchWorkspace({ id }) {
  return html`<main class="page" id="main"><h1 tabindex="-1">No such workspace</h1>
    <p>Nothing is registered as <code>${id}</code> (any more). <${Link} href="/">Back to your workspaces<//>.</p></main>`;
}

/** NotAnswering says the workspace's session does not answer its stream. */
export function NotAnswering() {
  return html`<p class="note note-warn" role="status">The workspace is not answering. Wharf keeps trying; what you see may be out of date.</p>`;
}

/**
 * NameDialog asks for one name and keeps it (a rename): problem(trimmed)
 * says in words what is wrong with it ('' when nothing), save(trimmed)
 * keeps it, and what it throws (the API's answer) shows in the dialog.
 */
export function NameDialog({ title, label, help, initial, maxlength, problem, save, onClose }) {
  const [name, setName] = useState(initial || '');
  const action = useAction();
  const helpId = useId();
  const trimmed = name.trim();
  const invalid = problem(trimmed);
  const submit = (e) => {
    e.preventDefault();
    if (invalid) return;
    action.run(async () => {
      await save(trimmed);
      onClose();
    });
  };
  return html`<${Dialog} title=${title} onClose=${onClose}>
    <form class="dialog-body" onSubmit=${submit}>
      <label class="field">
        <span class="field-label">${label}</span>
        <input autofocus value=${name} maxlength=${maxlength} onInput=${(e) => setName(e.currentTarget.value)}
          aria-invalid=${invalid ? 'true' : undefined} aria-describedby=${helpId} />
        <span class="field-help" id=${helpId}>${invalid || help}</span>
      </label>
      <${ErrorNote} error=${action.error} />
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>Cancel</button>
        <button type="submit" class="btn btn-primary" disabled=${action.busy || !!invalid}>${action.busy ? 'Saving…' : 'Rename'}</button>
      </div>
    </form>
  </${Dialog}>`;
}

const rtf = typeof Intl !== 'undefined' && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' }) : null;

/** relTime says how long ago epoch milliseconds ms was, in words. */
export function relTime(ms, now = Date.now()) {
  const s = Math.round((ms - now) / 1000);
  const abs = Math.abs(s);
  if (abs < 45) return 'just now';
  const steps = [[60, 'minute', 60], [3600, 'hour', 24], [86400, 'day', 30], [2592000, 'month', 12], [31536000, 'year', Infinity]];
  for (const [unit, name, max] of steps) {
    const n = Math.round(s / unit);
    if (Math.abs(n) < max) return rtf ? rtf.format(n, name) : `${Math.abs(n)} ${name}${Math.abs(n) === 1 ? '' : 's'} ago`;
  }
  return new Date(ms).toLocaleDateString();
}

/** useNow re-renders every interval ms, for relative times that age. */
export function useNow(interval = 30000) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), interval);
    return () => clearInterval(t);
  }, [interval]);
  return now;
}

/** The longest pause between two polls after failures. */
const POLL_MAX_MS = 60000;

/**
 * usePoll calls load() now and then every interval ms while the page is
 * visible: one call at a time, the next one scheduled once the last has
 * answered; after a failure (load throws) the pause doubles, up to a
 * minute, and the first success brings it back. Nothing runs while the
 * page is hidden; showing it again calls at once. It returns a function
 * that calls at once (a call in flight is followed by one more, so what
 * it reads is newer than the call).
 */
export function usePoll(load, interval) {
  const latest = useRef(load);
  latest.current = load;
  const now = useRef(() => {});
  useEffect(() => {
    let alive = true;
    let timer = 0;
    let running = false;
    let again = false;
    let pause = interval;
    const run = async () => {
      clearTimeout(timer);
      timer = 0;
      if (!alive || document.hidden) return;
      if (running) { again = true; return; }
      running = true;
      try {
        await latest.current();
        pause = interval;
      } catch {
        pause = Math.min(pause * 2, POLL_MAX_MS);
      }
      running = false;
      if (again) { again = false; run(); return; }
      if (alive && !document.hidden) timer = setTimeout(run, pause);
    };
    const shown = () => { if (!document.hidden) run(); else { clearTimeout(timer); timer = 0; } };
    now.current = run;
    document.addEventListener('visibilitychange', shown);
    run();
    return () => {
      alive = false;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', shown);
    };
  }, [interval]);
  return () => now.current();
}

const icons = {
  folder: 'M3 6.5A1.5 1.5 0 0 1 4.5 5h4l2 2h9A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z',
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
  branch: 'M6 3v12M18 9a3 3 0 1 0 0-.01M6 21a3 3 0 1 0 0-.01M18 12c0 4-6 3-11 6',
  up: 'M12 19V5M5 12l7-7 7 7',
  plus: 'M12 5v14M5 12h14',
  more: 'M5 12h.01M12 12h.01M19 12h.01',
  play: 'M7 5v14l11-7z',
  stop: 'M7 7h10v10H7z',
  commit: 'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6M3 12h6M15 12h6',
  chevron: 'M9 6l6 6-6 6',
  home: 'M4 11l8-7 8 7v9h-5v-6H9v6H4z',
  gear: 'M12 15a3 3 0 1 0 0-6 3 3 0 0 0 0 6zM19 12a7 7 0 0 0-.1-1.2l2-1.6-2-3.4-2.4 1a7 7 0 0 0-2-1.2L14 3h-4l-.5 2.6a7 7 0 0 0-2 1.2l-2.4-1-2 3.4 2 1.6a7 7 0 0 0 0 2.4l-2 1.6 2 3.4 2.4-1a7 7 0 0 0 2 1.2L10 21h4l.5-2.6a7 7 0 0 0 2-1.2l2.4 1 2-3.4-2-1.6c.1-.4.1-.8.1-1.2z',
  out: 'M15 4h4v16h-4M10 8l-4 4 4 4M6 12h11',
  chat: 'M4 5h16v11H9l-5 4z',
  tool: 'M14.5 5.5a4 4 0 0 0-5 5L4 16l4 4 5.5-5.5a4 4 0 0 0 5-5l-2.5 2.5-2.5-.5-.5-2.5z',
  terminal: 'M4 5h16v14H4zM7 9l3 3-3 3M12 15h5',
  edit: 'M4 20h4L19 9l-4-4L4 16zM13 7l4 4',
  lock: 'M6 11h12v9H6zM8.5 11V8a3.5 3.5 0 0 1 7 0v3',
  question: 'M9.5 9a2.5 2.5 0 1 1 3.5 2.3c-.7.3-1 .9-1 1.7M12 17h.01M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18',
  image: 'M4 5h16v14H4zM4 16l5-5 4 4 2-2 5 5M15 9h.01',
  send: 'M4 12l16-8-6 16-3-7z',
  x: 'M6 6l12 12M18 6L6 18',
  plan: 'M9 6h11M9 12h11M9 18h11M4 6h.01M4 12h.01M4 18h.01',
  key: 'M8 8a4 4 0 1 0 0 8 4 4 0 0 0 0-8zM12 12h9M17 12v3M20 12v2',
};

/** Icon draws one of the line icons above; it is decoration only. */
export function Icon({ name, size = 18 }) {
  return html`<svg class="icon" width=${size} height=${size} viewBox="0 0 24 24" aria-hidden="true" focusable="false"
    fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"><path d=${icons[name]} /></svg>`;
}

/** Empty is an empty state: what is missing and what to do about it. */
export function Empty({ title, children }) {
  return html`<div class="empty"><h2 class="empty-title">${title}</h2>${children}</div>`;
}

/** usePageTitle sets the document title (App moves focus to the heading). */
export function usePageTitle(title) {
  useEffect(() => {
    document.title = title ? `${title} · Wharf` : 'Wharf';
  }, [title]);
}

/** baseName is the last segment of a path. */
export function baseName(p) {
  const parts = String(p).split('/').filter(Boolean);
  return parts.length ? parts[parts.length - 1] : '/';
}

/** Logo is Wharf's mark: a pier over water. */
export function Logo({ size = 28 }) {
  return html`<svg class="logo" width=${size} height=${size} viewBox="0 0 32 32" aria-hidden="true" focusable="false">
    <rect width="32" height="32" rx="8" class="logo-bg" />
    <path d="M7 12h18M9 12v9M16 12v9M23 12v9" class="logo-pier" />
    <path d="M6 24c2.5 1.6 4.5 1.6 7 0s4.5-1.6 7 0 4.5 1.6 6 0" class="logo-water" />
  </svg>`;
}

/**
 * memo wraps a function component so that it re-renders only when one of
 * its props changed (by identity): the workspace list redraws only the
 * rows whose workspace or activity changed.
 */
export function memo(fn) {
  class Memo extends Component {
    shouldComponentUpdate(next) {
      for (const k in next) if (next[k] !== this.props[k]) return true;
      for (const k in this.props) if (!(k in next)) return true;
      return false;
    }

    render(props) { return h(fn, props); }
  }
  Memo.displayName = 'Memo(' + (fn.name || 'component') + ')';
  return Memo;
}
