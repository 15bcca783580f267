// A small Markdown renderer for agents' answers that builds Preact
// elements, never HTML: every piece of the agent's text ends up in a text
// node, so HTML in an answer (`<img src=x onerror=…>`) shows literally
// and runs nothing. It knows the common CommonMark and GitHub forms an
// agent writes: paragraphs (a single line break is kept), headings, fenced
// and indented code, block quotes, lists, tables, rules, and inline code,
// emphasis, strikethrough and links. Links go to http, https and mailto
// addresses only, open in a new tab and send no referrer; images are
// shown as links (the page loads nothing the agent names).
import { h } from 'preact';

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const BULLET = /^( {0,3})([-*+])\s+(.*)$/;
const ORDERED = /^( {0,3})(\d{1,9})[.)]\s+(.*)$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const TABLE_SEP = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;

/** Markdown renders text as Markdown, into a div of class md. */
export function Markdown({ text }) {
  return h('div', { class: 'md' }, blocks(String(text || '').replace(/\r\n?/g, '\n').split('\n')));
}

const isBlank = (l) => !l.trim();
const startsBlock = (l) => FENCE.test(l) || HEADING.test(l) || QUOTE.test(l) || BULLET.test(l) || ORDERED.test(l) || RULE.test(l);

function blocks(lines) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (isBlank(line)) { i++; continue; }
    if ((m = FENCE.exec(line))) {
      const close = new RegExp('^ {0,3}' + m[1][0] + '{' + m[1].length + ',}\\s*$');
      const code = [];
      for (i++; i < lines.length && !close.test(lines[i]); i++) code.push(lines[i]);
      i++;
      out.push(h('pre', { class: 'md-code', 'data-lang': m[2] || undefined }, h('code', null, code.join('\n'))));
      continue;
    }
    if (/^( {4}|\t)/.test(line)) {
      const code = [];
      for (; i < lines.length && (/^( {4}|\t)/.test(lines[i]) || isBlank(lines[i])); i++) code.push(lines[i].replace(/^( {4}|\t)/, ''));
      while (code.length && isBlank(code[code.length - 1])) code.pop();
      out.push(h('pre', { class: 'md-code' }, h('code', null, code.join('\n'))));
      continue;
    }
    if (RULE.test(line)) { out.push(h('hr', null)); i++; continue; }
    if ((m = HEADING.exec(line))) {
      out.push(h('h' + Math.min(6, m[1].length + 2), { class: 'md-h' }, inline(m[2])));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner = [];
      for (; i < lines.length && (m = QUOTE.exec(lines[i])); i++) inner.push(m[1]);
      out.push(h('blockquote', null, blocks(inner)));
      continue;
    }
    if (BULLET.test(line) || ORDERED.test(line)) {
      const ordered = ORDERED.test(line);
      const re = ordered ? ORDERED : BULLET;
      const items = [];
      let start = 1;
      while (i < lines.length) {
        m = re.exec(lines[i]);
        if (!m) break;
        if (!items.length && ordered) start = Number(m[2]);
        const body = [m[3]];
        const indent = m[1].length + m[2].length + 1;
        for (i++; i < lines.length; i++) {
          const l = lines[i];
          if (re.test(l) && /^\s*/.exec(l)[0].length <= m[1].length) break;
          if (isBlank(l)) {
            if (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1])) { body.push(''); continue; }
            break;
          }
          if (!/^\s/.test(l) && startsBlock(l)) break;
          body.push(l.slice(Math.min(indent, /^\s*/.exec(l)[0].length)));
        }
        items.push(h('li', null, listItem(body)));
      }
      out.push(ordered ? h('ol', start !== 1 ? { start } : null, items) : h('ul', null, items));
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1])) {
      const head = cells(line);
      const rows = [];
      for (i += 2; i < lines.length && lines[i].includes('|') && !isBlank(lines[i]); i++) rows.push(cells(lines[i]));
      out.push(h('div', { class: 'md-table' }, h('table', null,
        h('thead', null, h('tr', null, head.map((c) => h('th', null, inline(c))))),
        h('tbody', null, rows.map((r) => h('tr', null, head.map((_, j) => h('td', null, inline(r[j] || '')))))))));
      continue;
    }
    const para = [];
    for (; i < lines.length && !isBlank(lines[i]) && (!para.length || !startsBlock(lines[i])); i++) para.push(lines[i].trim());
    const parts = [];
    para.forEach((l, j) => {
      if (j) parts.push(h('br', null));
      parts.push(...inline(l));
    });
    out.push(h('p', null, parts));
  }
  return out;
}

/** listItem renders a list item's lines: plain text when it is one paragraph. */
function listItem(body) {
  if (body.length === 1 && !startsBlock(body[0])) return inline(body[0]);
  return blocks(body);
}

function cells(row) {
  return row.trim().replace(/^\|/, '').replace(/\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

// Inline forms, tried at each position; the earliest match wins.
const INLINE = new RegExp([
  /(`+)([^`][\s\S]*?)\1(?!`)/, // 1, 2: code
  /\*\*(\S[\s\S]*?)\*\*|__(\S[\s\S]*?)__/, // 3, 4: strong
  /\*(\S[\s\S]*?)\*|(?<![\w])_(\S[\s\S]*?)_(?![\w])/, // 5, 6: emphasis
  /~~(\S[\s\S]*?)~~/, // 7: strikethrough
  /(!?)\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/, // 8, 9, 10: link or image
  /<((?:https?|mailto):[^>\s]+)>/, // 11: autolink
  /(https?:\/\/[^\s<]*[^\s<.,:;"')\]])/, // 12: bare address
  /\\([\\`*_{}[\]()#+\-.!~|>])/, // 13: escape
].map((r) => r.source).join('|'), 'g');

/** safeURL returns href when it is an http, https or mailto address, else ''. */
export function safeURL(href) {
  try {
    const u = new URL(href, location.href);
    return ['http:', 'https:', 'mailto:'].includes(u.protocol) && /^(https?:|mailto:)/i.test(href) ? u.href : '';
  } catch {
    return '';
  }
}

function link(href, children) {
  const url = safeURL(href);
  if (!url) return children;
  return [h('a', { href: url, target: '_blank', rel: 'noopener noreferrer' }, children)];
}

/** inline renders one run of text with its inline forms; the rest is text. */
export function inline(text) {
  const out = [];
  let last = 0;
  for (;;) {
    // Set each time: the nested calls below use the same expression.
    INLINE.lastIndex = last;
    const m = INLINE.exec(text);
    if (!m) break;
    if (m.index > last) out.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] !== undefined) out.push(h('code', null, m[2].replace(/^ (.*) $/, '$1')));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(h('strong', null, inline(m[3] ?? m[4])));
    else if (m[5] !== undefined || m[6] !== undefined) out.push(h('em', null, inline(m[5] ?? m[6])));
    else if (m[7] !== undefined) out.push(h('del', null, inline(m[7])));
    else if (m[9] !== undefined) out.push(...link(m[10], m[8] ? ['🖼 ', ...inline(m[9])] : inline(m[9])));
    else if (m[11] !== undefined) out.push(...link(m[11], [m[11]]));
    else if (m[12] !== undefined) out.push(...link(m[12], [m[12]]));
    else if (m[13] !== undefined) out.push(m[13]);
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}
