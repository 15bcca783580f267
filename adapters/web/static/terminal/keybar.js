// The key bar under a terminal on a phone: the keys a phone's keyboard
// lacks (Esc, Tab, Ctrl, arrows) and copy and paste. Ctrl is sticky: it
// arms for the next key, typed or tapped, then releases. The buttons keep
// the focus in the terminal (pointerdown does not move it), so the
// keyboard stays up between a tap and the next key.
import { useState } from 'preact/hooks';
import { html } from '../html.js';
import { announce } from '../announce.js';
import { Dialog } from '../ui.js';

const arrows = [['←', 'Left', 'D'], ['↑', 'Up', 'A'], ['↓', 'Down', 'B'], ['→', 'Right', 'C']];

/** KeyBar sends keys to screen (openScreen's controller); ctrl is the armed state. */
export function KeyBar({ screen, ctrl, setCtrl, readOnly }) {
  const [dialog, setDialog] = useState(null); // {kind: 'copy'|'paste', text}
  const keep = (e) => e.preventDefault(); // the terminal keeps the focus
  const send = (data) => () => { screen?.keys(data); screen?.focus(); };
  const arrow = (c) => () => {
    // Arrows follow the terminal's cursor-key mode (vim and less switch it).
    screen?.keys((screen?.appCursor() ? '\x1bO' : '\x1b[') + c);
    screen?.focus();
  };
  const copy = async () => {
    const text = screen?.selection() || '';
    if (!text) {
      announce('Select text in the terminal first');
      return;
    }
    try {
      await navigator.clipboard.writeText(text);
      announce('Copied');
    } catch {
      setDialog({ kind: 'copy', text }); // no clipboard access (plain http, say): copy by hand
    }
  };
  const paste = async () => {
    try {
      const text = await navigator.clipboard.readText();
      if (text) screen?.paste(text);
      screen?.focus();
    } catch {
      setDialog({ kind: 'paste', text: '' });
    }
  };
  const dis = readOnly || !screen;
  return html`<div class="term-keys" role="toolbar" aria-label="Terminal keys">
    <button type="button" class="term-key" aria-label="Escape" disabled=${dis} onPointerDown=${keep} onClick=${send('\x1b')}>Esc</button>
    <button type="button" class="term-key" aria-label="Tab" disabled=${dis} onPointerDown=${keep} onClick=${send('\t')}>Tab</button>
    <button type="button" class="term-key" aria-label="Control (applies to the next key)" aria-pressed=${ctrl} disabled=${dis}
      onPointerDown=${keep} onClick=${() => {
        // Armed in the screen at once: the next key may come before a render.
        screen?.setCtrl(!ctrl);
        setCtrl(!ctrl);
        screen?.focus();
      }}>Ctrl</button>
    ${arrows.map(([glyph, name, c]) => html`<button type="button" class="term-key" aria-label=${name} disabled=${dis}
      onPointerDown=${keep} onClick=${arrow(c)}>${glyph}</button>`)}
    <button type="button" class="term-key" aria-label="Copy the selection" disabled=${!screen} onPointerDown=${keep} onClick=${copy}>Copy</button>
    <button type="button" class="term-key" aria-label="Paste" disabled=${dis} onPointerDown=${keep} onClick=${paste}>Paste</button>
    ${dialog ? html`<${ClipDialog} kind=${dialog.kind} text=${dialog.text} onClose=${() => { setDialog(null); screen?.focus(); }}
      onPaste=${(t) => screen?.paste(t)} />` : null}
  </div>`;
}

/**
 * ClipDialog stands in for a clipboard the page may not use (outside a
 * secure context, or permission refused): the selection to copy by hand,
 * or a box to paste into.
 */
function ClipDialog({ kind, text, onClose, onPaste }) {
  const [value, setValue] = useState(text);
  const submit = (e) => {
    e.preventDefault();
    if (kind === 'paste' && value) onPaste(value);
    onClose();
  };
  return html`<${Dialog} title=${kind === 'copy' ? 'Copy' : 'Paste'} onClose=${onClose} labelledBy="clip-title">
    <form class="dialog-body" onSubmit=${submit}>
      <label class="field">
        <span class="field-label">${kind === 'copy' ? 'The selection: copy it from here' : 'Paste here, then send it to the terminal'}</span>
        <textarea autofocus rows="5" class="term-clip" readonly=${kind === 'copy'} value=${value}
          onFocus=${(e) => { if (kind === 'copy') e.currentTarget.select(); }}
          onInput=${(e) => setValue(e.currentTarget.value)}></textarea>
      </label>
      <div class="dialog-actions">
        <button type="button" class="btn" onClick=${onClose}>${kind === 'copy' ? 'Done' : 'Cancel'}</button>
        ${kind === 'paste' ? html`<button type="submit" class="btn btn-primary" disabled=${!value}>Send</button>` : null}
      </div>
    </form>
  <//>`;
}
