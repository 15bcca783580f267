// A tool call's diff ({type: diff, path, oldText?, newText}) as a
// unified view: the changed lines with three lines of context, in hunks,
// with the old and new line numbers. Lines are compared with Myers'
// algorithm; past a bound (a rewrite of thousands of lines) the whole old
// text shows removed and the new one added, which is still correct.
import { html } from '../html.js';

const CONTEXT = 3;
const MAX_EDITS = 1000;

const splitLines = (s) => {
  if (!s) return [];
  const lines = s.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
};

/**
 * diffLines returns the edit script from a to b (arrays of lines) as
 * [{op: ' ' | '-' | '+', text, a, b}], a and b being 1-based line numbers
 * in the old and new text (0 where the line is not in that side).
 */
export function diffLines(a, b) {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const mid = myers(a.slice(pre, a.length - suf), b.slice(pre, b.length - suf));
  const out = [];
  let i = 0;
  let j = 0;
  const keep = (n) => { for (let k = 0; k < n; k++, i++, j++) out.push({ op: ' ', text: a[i], a: i + 1, b: j + 1 }); };
  keep(pre);
  for (const op of mid) {
    if (op === ' ') keep(1);
    else if (op === '-') { out.push({ op, text: a[i], a: i + 1, b: 0 }); i++; }
    else { out.push({ op, text: b[j], a: 0, b: j + 1 }); j++; }
  }
  keep(suf);
  return out;
}

/** myers returns the shortest edit script from a to b as a string of ' ', '-', '+'. */
function myers(a, b) {
  const n = a.length;
  const m = b.length;
  if (!n) return '+'.repeat(m);
  if (!m) return '-'.repeat(n);
  const max = Math.min(n + m, MAX_EDITS);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace = []; // before each round d, the diagonals it reads: v[off-d-1 .. off+d+1]
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m, d);
    }
  }
  return '-'.repeat(n) + '+'.repeat(m); // too different to be worth the search
}

function backtrack(trace, n, m, dEnd) {
  const ops = [];
  let x = n;
  let y = m;
  for (let d = dEnd; d > 0; d--) {
    const t = trace[d];
    const at = (k) => t[k + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const pk = down ? k + 1 : k - 1;
    const px = at(pk);
    const py = px - pk;
    while (x > px + (down ? 0 : 1) && y > py + (down ? 1 : 0)) { ops.push(' '); x--; y--; }
    ops.push(down ? '+' : '-');
    x = px;
    y = py;
  }
  while (x > 0 && y > 0) { ops.push(' '); x--; y--; }
  return ops.reverse().join('');
}

/** hunks groups an edit script into hunks of changes with their context. */
export function hunks(lines) {
  const out = [];
  let cur = null;
  let lastChange = -Infinity;
  lines.forEach((l, idx) => {
    if (l.op === ' ') return;
    const from = Math.max(0, idx - CONTEXT);
    if (cur && from <= lastChange + CONTEXT + 1) {
      for (let k = lastChange + 1; k <= idx; k++) cur.lines.push(lines[k]);
    } else {
      if (cur) for (let k = lastChange + 1; k <= Math.min(lines.length - 1, lastChange + CONTEXT); k++) cur.lines.push(lines[k]);
      cur = { lines: lines.slice(from, idx + 1) };
      out.push(cur);
    }
    lastChange = idx;
  });
  if (cur) for (let k = lastChange + 1; k <= Math.min(lines.length - 1, lastChange + CONTEXT); k++) cur.lines.push(lines[k]);
  for (const hk of out) {
    const first = hk.lines[0];
    const aStart = first.a || hk.lines.find((l) => l.a)?.a || 0;
    const bStart = first.b || hk.lines.find((l) => l.b)?.b || 0;
    const aLen = hk.lines.filter((l) => l.op !== '+').length;
    const bLen = hk.lines.filter((l) => l.op !== '-').length;
    hk.header = `@@ -${aLen ? aStart : Math.max(0, aStart - 1)},${aLen} +${bLen ? bStart : Math.max(0, bStart - 1)},${bLen} @@`;
  }
  return out;
}

/** Diff shows one file's change: its path, what it adds and removes, and the hunks. */
export function Diff({ path, oldText, newText }) {
  const lines = diffLines(splitLines(oldText), splitLines(newText));
  const added = lines.filter((l) => l.op === '+').length;
  const removed = lines.filter((l) => l.op === '-').length;
  const hs = hunks(lines);
  return html`<figure class="diff" data-path=${path}>
    <figcaption class="diff-head">
      <span class="diff-path">${path || 'a file'}</span>
      ${oldText == null ? html`<span class="tag">new file</span>` : null}
      <span class="plus">+${added}</span><span class="minus">−${removed}</span>
    </figcaption>
    ${hs.length ? html`<div class="diff-body" role="table" aria-label=${`Changes to ${path || 'the file'}`}>
      ${hs.map((hk, n) => html`<div key=${n} class="diff-hunk" role="rowgroup">
        <div class="dl dl-hunk" role="row"><span class="dl-code" role="cell">${hk.header}</span></div>
        ${hk.lines.map((l, k) => html`<div key=${k} class=${'dl' + (l.op === '+' ? ' dl-add' : l.op === '-' ? ' dl-del' : '')} role="row">
          <span class="ln" role="cell">${l.a || ''}</span><span class="ln" role="cell">${l.b || ''}</span>
          <span class="dl-code" role="cell"><span class="dl-sign" aria-label=${l.op === '+' ? 'added' : l.op === '-' ? 'removed' : undefined}>${l.op}</span>${l.text}</span>
        </div>`)}
      </div>`)}
    </div>` : html`<p class="muted small pad-x">No change in the text.</p>`}
  </figure>`;
}
