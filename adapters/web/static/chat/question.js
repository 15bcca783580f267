// A question of the agent (an ACP elicitation): a form built from the
// question's schema, a flat object of text, number, yes-or-no and
// one-of-a-list fields, answered `accept` with the fields, `decline` or
// `cancel` (workspaceAnswerQuestion). A question that asks the user to
// visit an address shows the address (http and https only) instead.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { chat } from '../api.js';
import { announce } from '../announce.js';
import { ErrorNote, Icon, useAction } from '../ui.js';
import { safeURL } from './markdown.js';

const ACTIONS = { accept: 'You answered.', decline: 'You declined to answer.', cancel: 'You dismissed the question.' };

/** fieldsOf reads the schema's fields: [{name, label, help, type, options, required}]. */
export function fieldsOf(schema) {
  const props = schema && typeof schema === 'object' && schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(props).map(([name, p]) => {
    p = p && typeof p === 'object' ? p : {};
    const options = Array.isArray(p.enum) ? p.enum.map((v, i) => ({ value: v, label: String(p.enumNames?.[i] ?? v) }))
      : Array.isArray(p.oneOf) ? p.oneOf.filter((o) => o && 'const' in o).map((o) => ({ value: o.const, label: String(o.title ?? o.const) }))
        : null;
    return { name, label: String(p.title || name), help: typeof p.description === 'string' ? p.description : '',
      type: options ? 'choice' : p.type === 'boolean' ? 'boolean' : p.type === 'number' || p.type === 'integer' ? p.type : 'string',
      options, required: required.has(name), def: p.default };
  });
}

const initial = (f) => (f.type === 'boolean' ? false : f.type === 'choice' && f.required ? f.options[0]?.value ?? '' : '');

export function Question({ it, ws, cid }) {
  const action = useAction();
  const fields = fieldsOf(it.schema);
  const [values, setValues] = useState(() => Object.fromEntries(fields.map((f) => [f.name, f.def ?? initial(f)])));
  const rid = it.id.startsWith('question:') ? it.id.slice('question:'.length) : it.id;
  const set = (name, v) => setValues((old) => ({ ...old, [name]: v }));
  const answer = (act, content) => action.run(async () => {
    await chat.answerQuestion(ws, cid, rid, content ? { action: act, content } : { action: act });
    announce(ACTIONS[act]);
  });
  const submit = (e) => {
    e.preventDefault();
    const content = {};
    for (const f of fields) {
      let v = values[f.name];
      if (f.type === 'number' || f.type === 'integer') {
        if (v === '' || v == null) continue;
        v = Number(v);
      }
      if (f.type === 'string' && v === '' && !f.required) continue;
      content[f.name] = v;
    }
    answer('accept', content);
  };
  const link = it.link ? safeURL(it.link) : '';
  const pending = it.state === 'pending';
  return html`<div class=${'request request-' + (it.state || 'pending')} role="group" aria-label="Question">
    <div class="request-head"><${Icon} name="question" size=${16} /><b>Question</b></div>
    ${it.intro ? html`<p class="request-intro">${it.intro}</p>` : null}
    ${link ? html`<p>The agent asks you to visit <a href=${link} target="_blank" rel="noopener noreferrer">${it.link}</a>.</p>` : null}
    ${!pending ? html`<p class="request-done">${it.state === 'answered' ? ACTIONS[it.action] || 'Answered.' : 'Withdrawn: the turn ended without an answer.'}</p>`
      : html`<form class="question-form" onSubmit=${submit}>
        ${fields.map((f) => html`<${Field} key=${f.name} f=${f} id=${`q-${rid}-${f.name}`} value=${values[f.name]} onChange=${(v) => set(f.name, v)} />`)}
        <div class="choices">
          <button type="submit" class="btn btn-primary" disabled=${action.busy}>${link ? 'Done' : 'Answer'}</button>
          <button type="button" class="btn" disabled=${action.busy} onClick=${() => answer('decline')}>Decline</button>
          <button type="button" class="btn btn-quiet" disabled=${action.busy} onClick=${() => answer('cancel')}>Dismiss</button>
        </div>
      </form>`}
    <${ErrorNote} error=${action.error} />
  </div>`;
}

function Field({ f, id, value, onChange }) {
  const help = f.help ? html`<span class="field-help">${f.help}</span>` : null;
  if (f.type === 'boolean') {
    return html`<label class="check"><input type="checkbox" id=${id} name=${f.name} checked=${!!value}
      onChange=${(e) => onChange(e.currentTarget.checked)} /><span>${f.label}</span>${help}</label>`;
  }
  let input;
  if (f.type === 'choice') {
    input = html`<select id=${id} name=${f.name} required=${f.required} onChange=${(e) => onChange(f.options[Number(e.currentTarget.value)]?.value)}>
      ${f.required ? null : html`<option value="">—</option>`}
      ${f.options.map((o, i) => html`<option key=${i} value=${i} selected=${o.value === value}>${o.label}</option>`)}
    </select>`;
  } else {
    input = html`<input id=${id} name=${f.name} type=${f.type === 'string' ? 'text' : 'number'} step=${f.type === 'integer' ? '1' : 'any'}
      required=${f.required} value=${value} onInput=${(e) => onChange(e.currentTarget.value)} />`;
  }
  return html`<div class="field"><label class="field-label" for=${id}>${f.label}</label>${input}${help}</div>`;
}
