// The inputs of an agent login: a method's extra fields (text or select,
// shown only while their `when` conditions hold, secret ones masked), a
// refusal shown by the input it names, and a text to copy. What is
// secret (a key, a secret answer, a code, an address) lives in the
// form's own state only, goes to the Hub in one request and is cleared
// as soon as the answer comes, whatever it is.
import { useId, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { ErrorNote } from '../ui.js';
import { fieldOf } from './accounts.js';

/**
 * FieldNote is err when it names field, shown under that input (its id
 * is what the input's aria-describedby names); nothing otherwise.
 */
export function FieldNote({ id, err, field }) {
  const mine = err && fieldOf(err) === field;
  return html`<div id=${id} class="field-note">${mine ? html`<${ErrorNote} error=${err} />` : null}</div>`;
}

/** Label is an input's label, with its required mark or "(optional)". */
function Label({ text, required }) {
  return html`<span class="field-label">${text}${required
    ? html`<span class="req" aria-hidden="true"> *</span>`
    : html` <span class="muted">(optional)</span>`}</span>`;
}

/**
 * Secret is a masked input (a key, a secret answer), never autofilled
 * or spell-checked.
 */
export function Secret({ label, name, value, set, err, field, required = true, help }) {
  const id = useId();
  const invalid = err && fieldOf(err) === field;
  return html`<div class="acct-field">
    <label class="field"><${Label} text=${label} required=${required} />
      <input type="password" name=${name} autocomplete="off" spellcheck=${false} autocapitalize="none" required=${required}
        value=${value} onInput=${(e) => set(e.currentTarget.value)}
        aria-invalid=${invalid ? 'true' : undefined} aria-describedby=${id} />
      ${help ? html`<span class="field-help">${help}</span>` : null}
    </label>
    <${FieldNote} id=${id} err=${err} field=${field} />
  </div>`;
}

/** Plain is a text input for a code or an address the person pastes. */
export function Plain({ label, name, value, set, err, field, help, inputMode }) {
  const id = useId();
  const invalid = err && fieldOf(err) === field;
  return html`<div class="acct-field">
    <label class="field"><${Label} text=${label} required=${true} />
      <input name=${name} autocomplete="off" spellcheck=${false} autocapitalize="none" required inputmode=${inputMode}
        value=${value} onInput=${(e) => set(e.currentTarget.value)}
        aria-invalid=${invalid ? 'true' : undefined} aria-describedby=${id} />
      ${help ? html`<span class="field-help">${help}</span>` : null}
    </label>
    <${FieldNote} id=${id} err=${err} field=${field} />
  </div>`;
}

/**
 * Fields are a method's extra inputs (AgentAccountField), those shown
 * only: answers holds them by key, set(key, value) changes one.
 */
export function Fields({ shown, answers, set, err }) {
  return shown.map((f) => html`<${Field} key=${f.key} f=${f} value=${answers[f.key] || ''} set=${(v) => set(f.key, v)} err=${err} />`);
}

function Field({ f, value, set, err }) {
  const id = useId();
  const invalid = err && fieldOf(err) === f.key;
  const common = { name: f.key, required: f.required, 'aria-invalid': invalid ? 'true' : undefined, 'aria-describedby': id };
  let input;
  if (f.kind === 'select') {
    input = html`<select ...${common} value=${value} onChange=${(e) => set(e.currentTarget.value)}>
      <option value="" disabled=${f.required}>${f.required ? 'Choose…' : 'None'}</option>
      ${(f.options || []).map((o) => html`<option key=${o.value} value=${o.value} title=${o.hint || undefined}>${o.label || o.value}</option>`)}
    </select>`;
  } else {
    input = html`<input ...${common} type=${f.secret ? 'password' : 'text'} autocomplete="off" spellcheck=${false}
      autocapitalize="none" inputmode=${f.valueType === 'number' ? 'decimal' : undefined} placeholder=${f.placeholder || undefined}
      value=${value} onInput=${(e) => set(e.currentTarget.value)} />`;
  }
  const hint = f.kind === 'select' ? (f.options || []).find((o) => o.value === value)?.hint : '';
  return html`<div class="acct-field">
    <label class="field"><${Label} text=${f.label || f.key} required=${f.required} />
      ${input}
      ${f.description || hint ? html`<span class="field-help">${[f.description, hint].filter(Boolean).join(' ')}</span>` : null}
      ${f.valueType === 'list' ? html`<span class="field-help">Separate the values with commas.</span>` : null}
    </label>
    <${FieldNote} id=${id} err=${err} field=${f.key} />
  </div>`;
}

/**
 * CopyText shows text to copy (a device code, a command, variable
 * names) in a read-only input, with a button that copies it where the
 * browser allows (a page served over plain HTTP to another machine may
 * not: the text is then selected, to copy with the keyboard).
 */
export function CopyText({ text, label, big }) {
  const ref = useRef(null);
  const [said, setSaid] = useState('');
  const copy = async () => {
    ref.current?.select();
    try {
      await navigator.clipboard.writeText(text);
      setSaid('Copied.');
    } catch {
      setSaid('This browser does not let the page copy: the text is selected, copy it with your keyboard.');
    }
  };
  return html`<div class=${'copy' + (big ? ' copy-big' : '')}>
    <input ref=${ref} readonly value=${text} aria-label=${label} spellcheck=${false} onFocus=${(e) => e.currentTarget.select()} />
    <button type="button" class="btn btn-sm" onClick=${copy} aria-label=${`Copy ${label.toLowerCase()}`}>Copy</button>
    ${said ? html`<span class="copy-said muted small" role="status">${said}</span>` : null}
  </div>`;
}
