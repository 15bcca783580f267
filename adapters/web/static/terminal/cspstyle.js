// xterm.js under the dashboard's Content-Security-Policy.
//
// The policy (adapters/web/web.go) says style-src 'self' with no
// 'unsafe-inline': no <style> element and no style attribute applies. Two
// things in xterm's DOM renderer rely on exactly those:
//
//  1. It writes its theme, cell size and scrollbar rules into <style>
//     elements it creates (element.textContent = "…"). The browser refuses
//     them (and fires securitypolicyviolation), so the rows have no height
//     and the colours are lost.
//  2. It gives a cell a 24-bit colour (COLORTERM=truecolor) or a contrast
//     fix with span.setAttribute("style", "color:#…"), refused the same way.
//
// Weakening the policy for the whole dashboard to let a terminal draw
// would let any injected markup style itself too, so it is not done.
// What the policy does allow is CSSOM from our own script: constructable
// stylesheets (new CSSStyleSheet + replaceSync, given to
// document.adoptedStyleSheets) and element.style.setProperty. So:
//
//  1. A <style> element that script appends empty (which is how xterm
//     makes each of its three: create, append, then set textContent) is
//     not attached: even an empty one is refused, with a violation. It is
//     remembered instead, and its textContent setter writes into a
//     constructable sheet of its own, adopted by the document. Style
//     elements with content, and any the HTML parser makes, are left to
//     the browser, which refuses them as before.
//  2. The renderer's row factory gets an _addStyle that sets the same
//     declarations through element.style.
//
// This gives nothing to an attacker who can inject markup but not run
// script (what style-src guards against): only script can append an
// element or set textContent, and script could adopt a sheet anyway.
// The CSS that reaches the sheets is xterm's own text built from our
// theme and the measured cell size, never terminal output: a program in
// the shell cannot inject rules. (2) reaches into xterm's internals
// (_core._renderService._renderer.value._rowFactory), which are pinned by
// the vendored version; the browser test of the terminal checks truecolor
// cells and the absence of any policy violation, so an upgrade that moves
// them fails a test instead of drawing wrong colours.

/** @type {Map<HTMLStyleElement, {parent: Node, sheet: CSSStyleSheet|null}>} the style elements held back */
const held = new Map();
let installed = false;

/**
 * installStyleShim holds back empty <style> elements appended by script
 * and routes their textContent into adopted sheets (once per page). Call
 * it before the first Terminal.open.
 */
export function installStyleShim() {
  if (installed) return;
  installed = true;
  const append = Node.prototype.appendChild;
  Node.prototype.appendChild = function appendChild(child) {
    if (child instanceof HTMLStyleElement && !held.has(child) && child.firstChild === null && !child.isConnected) {
      held.set(child, { parent: this, sheet: null });
      return child;
    }
    return append.call(this, child);
  };
  const native = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent');
  Object.defineProperty(HTMLStyleElement.prototype, 'textContent', {
    configurable: true,
    enumerable: native.enumerable,
    get() {
      const h = held.get(this);
      return h ? (h.text ?? '') : native.get.call(this);
    },
    set(text) {
      const h = held.get(this);
      if (!h) {
        native.set.call(this, text);
        return;
      }
      h.text = text == null ? '' : String(text);
      if (!h.sheet) {
        h.sheet = new CSSStyleSheet();
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, h.sheet];
      }
      h.sheet.replaceSync(h.text);
    },
  });
}

/**
 * releaseStyles drops the sheets of the style elements appended inside
 * root, or to an element no longer on the page. Call it after disposing
 * the terminal that root holds.
 */
export function releaseStyles(root) {
  const gone = new Set();
  for (const [el, h] of held) {
    if (root.contains(h.parent) || !h.parent.isConnected) {
      if (h.sheet) gone.add(h.sheet);
      held.delete(el);
    }
  }
  if (gone.size) document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => !gone.has(s));
}

/** heldStyles is how many style elements are held back (for tests). */
export function heldStyles() { return held.size; }

/**
 * patchCellStyles makes term's renderer set per-cell colours through
 * element.style rather than a style attribute. It reports whether it
 * found the renderer (false means xterm's internals moved: the cells
 * then lose their 24-bit colours, and the browser test fails).
 */
export function patchCellStyles(term) {
  const factory = term._core?._renderService?._renderer?.value?._rowFactory;
  if (!factory || typeof factory._addStyle !== 'function') return false;
  factory._addStyle = (el, decl) => {
    // decl is one "property:value" declaration, as xterm writes it.
    const i = decl.indexOf(':');
    if (i > 0) el.style.setProperty(decl.slice(0, i).trim(), decl.slice(i + 1).trim());
  };
  return true;
}
