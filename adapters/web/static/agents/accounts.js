// The agent-accounts listing as the pages hold it, and the pure rules
// they apply to it. useAccounts reads the listing (GET
// /api/hub/agent-accounts), takes every operation's answer as the new
// listing, and reads again on its own only while something is in
// motion: every 2 s while an agent's login interface is starting or a
// device login waits for the person's approval (nothing else tells the
// page when it ends) or just after a code or an address was submitted;
// twice, 2 s apart, after a login completed (the Hub re-reads the
// agent's saved logins once the login has completed, so the answer
// that says so may list them as they were); every 15 s while another
// login is pending (it may expire or be cancelled from another device);
// and not at all otherwise. Nothing runs while the page is hidden;
// showing it reads at once.
import { useEffect, useRef, useState } from 'preact/hooks';
import { accounts } from '../api.js';

/** The pauses between two reads (see above), and the longest after failures. */
export const FAST_MS = 2000;
const SLOW_MS = 15000;
const MAX_MS = 60000;
/** How long after a submission the page keeps reading fast. */
const SUBMITTED_MS = 30000;

/** busyState: the agent's login interface has not answered yet. */
export const busyState = (a) => a.state === 'starting' || a.state === 'idle';

/**
 * pollDelay is the pause before the next read of snap, 0 for none, at
 * time now: fastUntil is when the fast reads after a submission end,
 * againUntil when those after a completed login do.
 */
export function pollDelay(snap, now, fastUntil, againUntil = 0) {
  if (!snap) return 0;
  if (snap.agents.some(busyState) || now < againUntil) return FAST_MS;
  const pending = snap.attempts.filter((at) => at.state === 'pending');
  if (!pending.length) return 0;
  if (pending.some((at) => at.completion === 'device') || now < fastUntil) return FAST_MS;
  return SLOW_MS;
}

/** completedSince reports whether a login pending in prev is complete in next. */
export function completedSince(prev, next) {
  if (!prev) return false;
  const was = new Set(prev.attempts.filter((at) => at.state === 'pending').map((at) => at.id));
  return next.attempts.some((at) => at.state === 'complete' && was.has(at.id));
}

/**
 * useAccounts returns {snap, error, reload, apply, submitted}: snap is
 * the newest listing (null until the first answer), error the last
 * read's failure (null after a success), reload() reads now, apply(s)
 * takes an operation's answer s as the listing, and submitted() says a
 * code or an address went in (read fast for a while). An answer to a
 * request started before the one already shown is dropped.
 */
export function useAccounts() {
  const [state, setState] = useState({ snap: null, error: null });
  const ref = useRef(null);
  if (!ref.current) {
    ref.current = { alive: true, timer: 0, ticket: 0, shown: 0, running: false, again: false, pause: 0, fastUntil: 0, againUntil: 0, snap: null };
  }
  const st = ref.current;

  const schedule = () => {
    clearTimeout(st.timer);
    st.timer = 0;
    if (!st.alive || document.hidden) return;
    const d = st.pause || pollDelay(st.snap, Date.now(), st.fastUntil, st.againUntil);
    if (d) st.timer = setTimeout(read, d);
  };
  const show = (ticket, snap) => {
    if (!st.alive || ticket < st.shown) return;
    st.shown = ticket;
    if (completedSince(st.snap, snap)) st.againUntil = Date.now() + FAST_MS + 500;
    st.snap = snap;
    st.pause = 0;
    setState({ snap, error: null });
  };
  const read = async () => {
    clearTimeout(st.timer);
    st.timer = 0;
    if (!st.alive) return;
    if (st.running) { st.again = true; return; }
    st.running = true;
    const ticket = ++st.ticket;
    try {
      show(ticket, await accounts.list());
    } catch (error) {
      if (st.alive) {
        // Keep reading while something was in motion, more slowly each time.
        const d = pollDelay(st.snap, Date.now(), st.fastUntil, st.againUntil);
        st.pause = d ? Math.min(Math.max(st.pause * 2, d), MAX_MS) : 0;
        setState((s) => ({ snap: s.snap, error }));
      }
    }
    st.running = false;
    if (st.again) { st.again = false; read(); return; }
    schedule();
  };
  const apply = (snap) => {
    show(++st.ticket, snap);
    schedule();
  };
  const submitted = () => {
    st.fastUntil = Date.now() + SUBMITTED_MS;
    schedule();
  };

  useEffect(() => {
    const shown = () => { if (!document.hidden) read(); else { clearTimeout(st.timer); st.timer = 0; } };
    document.addEventListener('visibilitychange', shown);
    read();
    return () => {
      st.alive = false;
      clearTimeout(st.timer);
      document.removeEventListener('visibilitychange', shown);
    };
  }, []);
  return { snap: state.snap, error: state.error, reload: read, apply, submitted };
}

/**
 * shownFields are the fields of a method that apply to answers: those
 * whose every `when` condition holds on the answers of the fields that
 * apply themselves (a field hidden by its own conditions answers
 * nothing). Conditions may chain, so this settles in at most one pass
 * per field.
 */
export function shownFields(fields, answers) {
  let shown = fields;
  for (let i = 0; i <= fields.length; i++) {
    const eff = effective(shown, answers);
    const next = fields.filter((f) => (f.when || []).every((c) => ((eff[c.key] ?? '') === c.value) === (c.op === 'eq')));
    if (next.length === shown.length && next.every((f, j) => f === shown[j])) return next;
    shown = next;
  }
  return shown;
}

/** effective is answers restricted to the fields shown, without empty ones. */
export function effective(shown, answers) {
  const out = {};
  for (const f of shown) {
    const v = answers[f.key];
    if (typeof v === 'string' && v !== '') out[f.key] = v;
  }
  return out;
}

/** missing names the first required field shown and left empty, or null. */
export function missing(shown, answers) {
  return shown.find((f) => f.required && !(answers[f.key] || '').trim()) || null;
}

/**
 * linkOf returns url when it may be a link (http or https only: an
 * agent's page address is untrusted input), else ''.
 */
export function linkOf(url) {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : '';
  } catch {
    return '';
  }
}

/** attemptOf is the newest attempt of agent's target in snap, or null. */
export function attemptOf(snap, agent, target) {
  const list = snap ? snap.attempts.filter((at) => at.agent === agent && at.target === target) : [];
  return list.length ? list[list.length - 1] : null;
}

/**
 * loneLogin is the one browser login of an agent that has one target
 * with one oauth method, as {target, method}; null otherwise (or when
 * the agent cannot be logged in from the Hub).
 */
export function loneLogin(a) {
  if (!a || a.state !== 'ready' || !a.capabilities.login || a.targets.length !== 1) return null;
  const t = a.targets[0];
  const oauth = t.methods.filter((m) => m.kind === 'oauth');
  return oauth.length === 1 ? { target: t, method: oauth[0] } : null;
}

/** fieldOf is the input an error names (AgentAccountError.field), or ''. */
export const fieldOf = (error) => (error && error.body && typeof error.body.field === 'string' ? error.body.field : '');

/** problem is an Error for field, shown by it like the Hub's refusals. */
export function problem(field, message) {
  const e = new Error(message);
  e.body = { error: message, field };
  return e;
}
