// The ways to log an agent's target in (AgentAccountMethod), one
// component per kind: a key typed in (with the method's fields), a
// browser or device login started here (then followed by attempt.js),
// an environment variable to set on the Hub machine, a command to run
// there. Every operation answers the whole listing, which the caller's
// useAccounts takes (acc.apply).
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { accounts } from '../api.js';
import { announce } from '../announce.js';
import { ErrorNote, useAction } from '../ui.js';
import { effective, fieldOf, missing, problem, shownFields } from './accounts.js';
import { CopyText, Fields, Secret } from './forms.js';

/** useAnswers keeps a method's answers: {answers, set(key, value), clear(secretOnly)}. */
function useAnswers(fields) {
  const [answers, setAnswers] = useState({});
  const set = (k, v) => setAnswers((a) => ({ ...a, [k]: v }));
  const clear = (secretOnly) => setAnswers((a) => {
    if (!secretOnly) return {};
    const out = { ...a };
    for (const f of fields) if (f.secret) delete out[f.key];
    return out;
  });
  return { answers, set, clear };
}

/** errorHere is err when it names none of the form's own inputs: shown under the form. */
const errorHere = (err, inputs) => (err && !inputs.includes(fieldOf(err)) ? err : null);

/**
 * KeyMethod logs target t of agent a in with a key: a masked input,
 * never shown back and cleared once the Hub answered, and the method's
 * fields.
 */
export function KeyMethod({ a, t, m, acc }) {
  const [key, setKey] = useState('');
  const [done, setDone] = useState(false);
  const ans = useAnswers(m.fields);
  const action = useAction();
  const shown = shownFields(m.fields, ans.answers);
  const submit = (e) => {
    e.preventDefault();
    setDone(false);
    if (!key.trim()) { action.setError(problem('key', `Paste the ${m.label || 'key'}.`)); return; }
    const gap = missing(shown, ans.answers);
    if (gap) { action.setError(problem(gap.key, `Fill in ${gap.label || gap.key}.`)); return; }
    action.run(async () => {
      let snap;
      try {
        snap = await accounts.key(a.agent, t.id, m.id, key, effective(shown, ans.answers));
      } finally {
        setKey('');
        ans.clear(true);
      }
      ans.clear(false);
      acc.apply(snap);
      setDone(true);
      announce(`${a.name} logged in to ${t.name}`);
    });
  };
  const inputs = ['key', ...shown.map((f) => f.key)];
  return html`<form class="acct-form" onSubmit=${submit} autocomplete="off" data-method=${m.id}>
    <${Secret} label=${m.label || 'Key'} name="key" value=${key} set=${(v) => { setDone(false); setKey(v); }} err=${action.error} field="key"
      help="It goes to the agent on the Hub machine; Wharf does not keep it." />
    <${Fields} shown=${shown} answers=${ans.answers} set=${ans.set} err=${action.error} />
    <${ErrorNote} error=${errorHere(action.error, inputs)} />
    ${done ? html`<p class="note note-ok" role="status">✓ Logged in with the key.</p>` : null}
    <div class="acct-form-actions">
      <button type="submit" class="btn btn-primary" disabled=${action.busy}>${action.busy ? 'Logging in…' : 'Log in'}</button>
    </div>
  </form>`;
}

/** loginWords is the button of a browser login method. */
export const loginWords = (m) => (/\b(log|sign) ?in\b/i.test(m.label || '') ? m.label : `Log in with ${m.label || m.id}`);

/**
 * OAuthMethod starts a browser or device login of target t: at once
 * with a button, or after the method's fields in a form. onStarted runs
 * once the Hub answered with the new attempt.
 */
export function OAuthMethod({ a, t, m, acc, onStarted }) {
  const ans = useAnswers(m.fields);
  const action = useAction();
  const shown = shownFields(m.fields, ans.answers);
  const start = (e) => {
    if (e) e.preventDefault();
    const gap = missing(shown, ans.answers);
    if (gap) { action.setError(problem(gap.key, `Fill in ${gap.label || gap.key}.`)); return; }
    action.run(async () => {
      let snap;
      try {
        snap = await accounts.login(a.agent, t.id, m.id, effective(shown, ans.answers));
      } finally {
        ans.clear(true);
      }
      acc.apply(snap);
      announce(`Login started: open the login page`);
      if (onStarted) onStarted();
    });
  };
  const label = action.busy ? 'Starting…' : loginWords(m);
  if (!m.fields.length) {
    return html`<div class="acct-oauth" data-method=${m.id}>
      <button type="button" class="btn" disabled=${action.busy} onClick=${() => start()}>${label}</button>
      <${ErrorNote} error=${action.error} />
    </div>`;
  }
  return html`<form class="acct-form" onSubmit=${start} autocomplete="off" data-method=${m.id}>
    <${Fields} shown=${shown} answers=${ans.answers} set=${ans.set} err=${action.error} />
    <${ErrorNote} error=${errorHere(action.error, shown.map((f) => f.key))} />
    <div class="acct-form-actions">
      <button type="submit" class="btn btn-primary" disabled=${action.busy}>${label}</button>
    </div>
  </form>`;
}

/** EnvMethod names the variables to set where the Hub runs. */
export function EnvMethod({ m }) {
  const vars = m.variables || [];
  return html`<div class="acct-env" data-method=${m.id}>
    <p class="small">Set ${vars.length === 1 ? 'this variable' : 'these variables'} in the environment <code>wharf serve</code> runs in,
      on the Hub machine, then restart it: every workspace's agent then finds ${vars.length === 1 ? 'it' : 'them'}.</p>
    ${vars.length ? html`<${CopyText} text=${vars.join(' ')} label=${vars.length === 1 ? 'Variable name' : 'Variable names'} />` : null}
  </div>`;
}

/** CommandMethod is a command to run in a terminal on the Hub machine. */
export function CommandMethod({ m }) {
  return html`<div class="acct-command" data-method=${m.id}>
    <p class="small">Run this in a terminal on the Hub machine:</p>
    <${CopyText} text=${m.command} label="Command" />
  </div>`;
}

/**
 * Methods lists target t's ways to log in: a browser login without
 * fields is one button; the others (a key, a browser login with
 * fields, a variable, a command) open in place. With canLogin false
 * (the agent's login interface offers none) only the variables and
 * commands are shown.
 */
export function Methods({ a, t, acc, canLogin, onStarted }) {
  const list = t.methods.filter((m) => canLogin || m.kind === 'env' || m.kind === 'command');
  if (!list.length) return null;
  const buttons = list.filter((m) => m.kind === 'oauth' && !m.fields.length);
  const folded = list.filter((m) => !(m.kind === 'oauth' && !m.fields.length));
  const body = (m) => {
    switch (m.kind) {
      case 'key': return html`<${KeyMethod} a=${a} t=${t} m=${m} acc=${acc} />`;
      case 'oauth': return html`<${OAuthMethod} a=${a} t=${t} m=${m} acc=${acc} onStarted=${onStarted} />`;
      case 'env': return html`<${EnvMethod} m=${m} />`;
      case 'command': return html`<${CommandMethod} m=${m} />`;
    }
    return html`<p class="muted small">This way of logging in is not known to this page.</p>`;
  };
  return html`<div class="acct-methods">
    <h4 class="acct-sub">Log in</h4>
    ${buttons.length ? html`<div class="acct-buttons">${buttons.map((m) => html`<${OAuthMethod} key=${m.id} a=${a} t=${t} m=${m}
      acc=${acc} onStarted=${onStarted} />`)}</div>` : null}
    ${folded.map((m) => html`<details key=${m.id} class="acct-method" data-method=${m.id}>
      <summary>${m.label || m.id}</summary>
      <div class="acct-method-body">${body(m)}</div>
    </details>`)}
  </div>`;
}
