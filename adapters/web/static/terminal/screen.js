// One shell on screen: an xterm.js terminal in a host element, fitted to
// it, attached to the shell's socket (attach.js). This module and the
// vendored xterm it imports load only when a shell is shown: the
// section (section.js) imports it dynamically.
import { Terminal } from '../vendor/xterm.mjs';
import { FitAddon } from '../vendor/addon-fit.mjs';
import { installStyleShim, patchCellStyles, releaseStyles } from './cspstyle.js';
import { Attachment } from './attach.js';

// The screen's colours follow the dashboard's theme (app.css's tokens);
// the ANSI colours are tuned per background so they stay legible.
const palettes = {
  dark: {
    black: '#1d2026', red: '#ff8a80', green: '#6fd39f', yellow: '#ffbe5c', blue: '#8fb0ff', magenta: '#b9a0ff', cyan: '#6fd0e3', white: '#d6d3cc',
    brightBlack: '#6b717b', brightRed: '#ffaba3', brightGreen: '#95e4ba', brightYellow: '#ffd38f', brightBlue: '#b4caff', brightMagenta: '#d2c2ff', brightCyan: '#9be2f0', brightWhite: '#ffffff',
  },
  light: {
    black: '#1c1e22', red: '#b3261e', green: '#1d7a4c', yellow: '#8a4b00', blue: '#2f5bd3', magenta: '#6a43c8', cyan: '#0d6e83', white: '#c9c6bd',
    brightBlack: '#5c626c', brightRed: '#d1382f', brightGreen: '#24915b', brightYellow: '#a35a00', brightBlue: '#4a72e0', brightMagenta: '#8260d6', brightCyan: '#168aa3', brightWhite: '#ffffff',
  },
};

/** theme is the xterm theme for the dashboard's current look. */
function theme() {
  const css = getComputedStyle(document.documentElement);
  const v = (name) => css.getPropertyValue(name).trim();
  const dark = css.colorScheme.includes('dark');
  return {
    ...palettes[dark ? 'dark' : 'light'],
    background: v('--surface'), foreground: v('--text'), cursor: v('--accent'), cursorAccent: v('--surface'),
    selectionBackground: dark ? '#3a4a6e' : '#c9d6f7', selectionInactiveBackground: dark ? '#30353d' : '#e3e1da',
  };
}

/** CTRL maps a key typed after the key bar's Ctrl to its control character. */
export function withCtrl(data) {
  if (data.length !== 1) return data;
  const c = data.toUpperCase().charCodeAt(0);
  if (c >= 64 && c <= 95) return String.fromCharCode(c - 64); // @ A–Z [ \ ] ^ _
  if (data === ' ') return '\x00';
  if (data === '?') return '\x7f';
  return data;
}

/**
 * openScreen shows shell in host and attaches to it. cb: status(s),
 * exited(code), check() (see attach.js), ctrlUsed() (the key bar's Ctrl
 * was applied to a key). The returned controller sends keys, copies the
 * selection, focuses, and is disposed when the shell leaves the page.
 */
export function openScreen(host, ws, shell, cb) {
  installStyleShim();
  const phone = matchMedia('(max-width: 640px), (pointer: coarse)').matches;
  const term = new Terminal({
    fontFamily: getComputedStyle(document.documentElement).getPropertyValue('--mono').trim() || 'monospace',
    fontSize: phone ? 13 : 14, scrollback: 5000, cursorBlink: true, theme: theme(), allowProposedApi: false,
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(host);
  const patched = patchCellStyles(term);
  host.dataset.cellStyles = patched ? 'patched' : 'unpatched';
  let ctrl = false;
  let readOnly = false;

  const att = new Attachment(ws, shell, {
    write: (bytes, done) => term.write(bytes, done),
    reset: () => {
      // RIS, after anything still queued: the replay starts on a clean
      // screen. The count shows on the host, for the tests.
      term.write('\x1bc');
      host.dataset.resets = Number(host.dataset.resets || 0) + 1;
    },
    // A read-only (agent's) terminal keeps the agent's size, and the
    // screen still fits the page: its lines wrap at the page's width.
    // Another client's resize of a shell is left as it is until this
    // page's own size changes: the last to resize wins.
    hello: (h) => {
      readOnly = h.readOnly;
      term.options.disableStdin = readOnly;
      refit();
      if (!readOnly && (term.cols !== h.cols || term.rows !== h.rows)) att.resize(term.cols, term.rows);
    },
    resized: () => {},
    exited: (code) => cb.exited(code),
    status: (s) => cb.status(s),
    check: () => cb.check(),
  });

  const keys = (data) => {
    if (ctrl) {
      ctrl = false;
      cb.ctrlUsed();
      data = withCtrl(data);
    }
    att.input(data);
  };
  term.onData(keys);
  // The size shows on the host too: what the tests compare with `stty size`.
  const sized = () => { host.dataset.cols = term.cols; host.dataset.rows = term.rows; };
  term.onResize(({ cols, rows }) => {
    sized();
    att.resize(cols, rows);
  });

  let frame = 0;
  function refit() {
    if (!host.isConnected || host.clientWidth === 0) return;
    fit.fit();
  }
  const ro = new ResizeObserver(() => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(refit);
  });
  ro.observe(host);
  const onOrientation = () => requestAnimationFrame(refit);
  screen.orientation?.addEventListener('change', onOrientation);
  const onVisibility = () => att.visibility(document.hidden);
  // Back online, the old socket may be dead without knowing it: resume on a new one.
  const onOnline = () => att.wake(true);
  document.addEventListener('visibilitychange', onVisibility);
  window.addEventListener('online', onOnline);
  const looks = new MutationObserver(() => { term.options.theme = theme(); });
  looks.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
  const scheme = matchMedia('(prefers-color-scheme: dark)');
  const onScheme = () => { term.options.theme = theme(); };
  scheme.addEventListener('change', onScheme);

  refit();
  sized();
  att.connect();

  return {
    /** keys sends what a key bar key types, through the Ctrl modifier like typed keys. */
    keys,
    /** setCtrl arms (or disarms) Ctrl for the next key. */
    setCtrl(on) { ctrl = on; },
    /** appCursor reports the cursor-key mode (DECCKM) the program asked for. */
    appCursor: () => term.modes.applicationCursorKeysMode,
    selection: () => term.getSelection(),
    paste: (text) => { if (!readOnly) term.paste(text); },
    focus: () => term.focus(),
    wake: () => att.wake(true),
    size: () => ({ cols: term.cols, rows: term.rows }),
    dispose() {
      att.close();
      ro.disconnect();
      looks.disconnect();
      cancelAnimationFrame(frame);
      screen.orientation?.removeEventListener('change', onOrientation);
      scheme.removeEventListener('change', onScheme);
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('online', onOnline);
      term.dispose();
      releaseStyles(host);
    },
  };
}
