// The transcript's items, one component per kind the conversation core
// produces (api/openapi.yaml, ConversationItem): user and assistant
// messages, reasoning, tool calls and commands, permissions, questions,
// notices, compaction and the plan. The context window is drawn in the
// page's head instead (chat/page.js). Text from the agent is Markdown
// rendered into text nodes (markdown.js) or plain text; nothing is parsed
// as HTML. An item of a kind this page does not know says so and shows
// nothing else.
import { html } from '../html.js';
import { chat } from '../api.js';
import { announce } from '../announce.js';
import { ErrorNote, Icon, memo, useAction } from '../ui.js';
import { Markdown } from './markdown.js';
import { Diff } from './diff.js';
import { Question } from './question.js';

/** Item draws one item; it redraws only when the item (a new object on every change) does. */
export const Item = memo(function Item({ it, ws, cid, streaming }) {
  const Kind = Object.hasOwn(KINDS, it.kind) ? KINDS[it.kind] : undefined;
  if (Kind === null) return null;
  return html`<li class=${'item item-' + (Kind ? it.kind : 'unknown')} data-item=${it.id} data-kind=${it.kind}>
    ${Kind ? html`<${Kind} it=${it} ws=${ws} cid=${cid} streaming=${streaming} />`
      : html`<p class="muted small">An item this page cannot show (${it.kind || 'no kind'}).</p>`}
  </li>`;
});

/** size says a byte count in words. */
export function size(n) {
  if (!Number.isFinite(n)) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KB`;
  return `${(n / 1048576).toFixed(1)} MB`;
}

const num = (n) => (Number.isFinite(n) ? n.toLocaleString('en-US') : '');

function UserMessage({ it }) {
  const atts = it.attachments || [];
  return html`<div class="msg msg-user">
    ${it.text ? html`<p class="msg-text">${it.text}</p>` : null}
    ${atts.length ? html`<ul class="atts" aria-label="Images">${atts.map((a, i) => html`<li key=${i} class="att">
      <${Icon} name="image" size=${16} /><span>${a.name || a.mimeType}</span><span class="muted">${size(a.size)}</span></li>`)}</ul>` : null}
  </div>`;
}

/** Usage is one turn's tokens (TokenUsage: every part optional). */
function Usage({ u }) {
  const parts = [];
  if (u.input != null) parts.push(`${num(u.input)} in`);
  if (u.output != null) parts.push(`${num(u.output)} out`);
  if (u.cacheRead != null) parts.push(`${num(u.cacheRead)} read from cache`);
  if (u.cacheWrite != null) parts.push(`${num(u.cacheWrite)} written to cache`);
  if (u.reasoning != null) parts.push(`${num(u.reasoning)} reasoning`);
  if (u.costUsd != null) parts.push(`$${u.costUsd.toFixed(4)}`);
  if (!parts.length) return null;
  return html`<p class="usage"><span class="usage-label">Tokens</span> ${parts.join(' · ')}</p>`;
}

function AssistantMessage({ it, streaming }) {
  const text = it.markdown || '';
  return html`<div class=${'msg msg-agent' + (streaming ? ' streaming' : '')}>
    ${text ? html`<${Markdown} text=${text} />` : null}
    ${it.usage ? html`<${Usage} u=${it.usage} />` : null}
  </div>`;
}

function Reasoning({ it, streaming }) {
  return html`<details class="reasoning">
    <summary>${streaming ? 'Thinking…' : 'Thought'}</summary>
    <${Markdown} text=${it.markdown || ''} />
  </details>`;
}

const TOOL_STATUS = { pending: 'Pending', in_progress: 'Running', completed: 'Done', failed: 'Failed' };

function Status({ status }) {
  if (!status) return null;
  return html`<span class=${'pill pill-' + status}>${TOOL_STATUS[status] || status}</span>`;
}

/** elapsed says how long a tool call took, when it took long enough to matter. */
const elapsed = (ms) => (ms == null || ms < 1000 ? '' : `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`);

const toolIcons = { edit: 'edit', delete: 'edit', move: 'edit', execute: 'terminal', read: 'file', search: 'tool', fetch: 'tool', think: 'chat' };

/** Content is a tool call's output: text, diffs and terminals. */
function Content({ content, command }) {
  return (content || []).map((c, i) => {
    if (c.type === 'diff') return html`<${Diff} key=${i} path=${c.path} oldText=${c.oldText} newText=${c.newText} />`;
    if (c.type === 'text') return html`<pre key=${i} class=${command ? 'out out-cmd' : 'out'}>${c.text}</pre>`;
    if (c.type === 'terminal') return html`<p key=${i} class="muted small">Output in terminal <code>${c.terminalId}</code>.</p>`;
    return null;
  });
}

function Tool({ it }) {
  const command = it.kind === 'command';
  const title = command ? it.command || it.title : it.title;
  return html`<div class=${'tool tool-' + (it.status || 'pending')}>
    <div class="tool-head">
      <${Icon} name=${command ? 'terminal' : toolIcons[it.toolKind] || 'tool'} size=${16} />
      ${command ? html`<code class="tool-cmd">${title || 'a command'}</code>` : html`<span class="tool-title">${title || it.toolKind || 'Tool call'}</span>`}
      <${Status} status=${it.status} />
      ${elapsed(it.elapsedMs) ? html`<span class="muted small">${elapsed(it.elapsedMs)}</span>` : null}
    </div>
    ${it.locations?.length ? html`<ul class="locs">${it.locations.map((l, i) => html`<li key=${i}><code>${l}</code></li>`)}</ul>` : null}
    <${Content} content=${it.content} command=${command} />
    ${it.input != null && !command ? html`<details class="tool-input"><summary>Input</summary>
      <pre class="out">${JSON.stringify(it.input, null, 2)}</pre></details>` : null}
  </div>`;
}

/** requestId is the id of an item's request: its id without the kind's prefix. */
export const requestId = (it) => (it.id.startsWith(it.kind + ':') ? it.id.slice(it.kind.length + 1) : it.id);

const choiceClass = (kind) => (String(kind).startsWith('allow') ? 'btn btn-primary' : String(kind).startsWith('reject') ? 'btn btn-danger-quiet' : 'btn');

function Permission({ it, ws, cid }) {
  const action = useAction();
  const answer = (c) => action.run(async () => {
    await chat.answerPermission(ws, cid, requestId(it), c.id);
    announce(`Answered: ${c.label}`);
  });
  const chosen = (it.choices || []).find((c) => c.id === it.choiceId);
  return html`<div class=${'request request-' + (it.state || 'pending')} role="group" aria-label="Permission request">
    <div class="request-head"><${Icon} name="lock" size=${16} /><b>Permission</b><span class="request-title">${it.title || 'The agent asks to go on'}</span></div>
    ${it.diff ? html`<${Diff} path=${it.diff.path} oldText=${it.diff.oldText} newText=${it.diff.newText} />` : null}
    ${it.state === 'pending' ? html`<div class="choices">
      ${(it.choices || []).map((c) => html`<button key=${c.id} type="button" class=${choiceClass(c.kind)} disabled=${action.busy}
        data-choice=${c.id} onClick=${() => answer(c)}>${c.label || c.id}</button>`)}
    </div>` : html`<p class="request-done">${it.state === 'answered'
      ? html`Answered: <b>${chosen ? chosen.label : it.choiceId}</b>` : 'Withdrawn: the turn ended without an answer.'}</p>`}
    <${ErrorNote} error=${action.error} />
  </div>`;
}

const LEVELS = { info: 'note-info', warning: 'note-warn', error: 'note-error' };

function Notice({ it }) {
  return html`<div class=${'note ' + (LEVELS[it.level] || 'note-info')} role=${it.level === 'error' ? 'alert' : undefined}>
    <span>${it.message}</span>${it.code ? html`<span class="tag">${it.code}</span>` : null}
  </div>`;
}

function Compaction({ it }) {
  const words = { in_progress: 'Compacting the context…', completed: 'Context compacted', failed: 'Compacting the context failed', cancelled: 'Compacting the context was cancelled' };
  return html`<div class="compaction">
    <p class="muted small">${words[it.status] || 'Compaction'}</p>
    ${it.summary ? html`<details><summary>Summary</summary><${Markdown} text=${it.summary} /></details>` : null}
  </div>`;
}

const MARKS = { completed: '✓', in_progress: '◐', pending: '○' };

function Plan({ it }) {
  const entries = it.entries || [];
  const done = entries.filter((e) => e.status === 'completed').length;
  return html`<div class="plan">
    <div class="plan-head"><${Icon} name="plan" size=${16} /><b>Plan</b><span class="muted small">${done} of ${entries.length} done</span></div>
    <ol>${entries.map((e, i) => html`<li key=${i} class=${'plan-' + (e.status || 'pending')}>
      <span class="plan-mark" aria-hidden="true">${MARKS[e.status] || '○'}</span>
      <span>${e.content}</span><span class="sr-only">${e.status}</span></li>`)}</ol>
  </div>`;
}

// Components by kind; null: drawn elsewhere (the context window, in the head).
const KINDS = {
  user_message: UserMessage,
  assistant_message: AssistantMessage,
  reasoning: Reasoning,
  tool: Tool,
  command: Tool,
  permission: Permission,
  question: Question,
  notice: Notice,
  compaction: Compaction,
  task_progress: Plan,
  context_window: null,
};
