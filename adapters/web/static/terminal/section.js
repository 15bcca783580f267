// The Terminal section of a workspace's page: the workspace's shells as
// tabs (GET /s/{ws}/api/shells), a new one, rename, close, and the
// chosen one on screen. Its list is read again whenever the Hub's facts
// about the workspace's shells (HubWorkspace.shells) or its activity
// change, and when a shell on screen ends. The terminal itself (xterm.js,
// ~90 KB compressed) loads only once a shell is shown: screen.js is
// imported dynamically. The shell shown is remembered per workspace for
// this tab (sessionStorage), so a reload shows it again.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { ApiError, shells as api } from '../api.js';
import { announce } from '../announce.js';
import { activityOf } from '../model.js';
import { Confirm, ErrorNote, Icon, NameDialog, Spinner, useAction } from '../ui.js';
import { KeyBar } from './keybar.js';

const remembered = (ws) => `wharf.shell.${ws}`;

/**
 * shellsOf is the list of a list answer; an empty answer (a Hub between
 * a restart and its first request, say) lists nothing.
 */
const shellsOf = (r) => (Array.isArray(r?.shells) ? r.shells : []);

/** TerminalSection lists ws's shells and shows one; running says the workspace runs. */
export function TerminalSection({ ws, running }) {
  const [list, setList] = useState(null); // null until read
  const [error, setError] = useState(null);
  const [shown, setShown] = useState(() => sessionStorage.getItem(remembered(ws.id)) || '');
  const [dialog, setDialog] = useState('');
  const [ticks, setTicks] = useState(0);
  const create = useAction();
  const facts = JSON.stringify(ws.shells || []);
  const act = activityOf(ws.id);

  useEffect(() => {
    if (!running) {
      setList(null);
      return undefined;
    }
    let alive = true;
    api.list(ws.id).then((r) => { if (alive) { setList(shellsOf(r)); setError(null); } },
      (e) => { if (alive) setError(e); });
    return () => { alive = false; };
  }, [ws.id, running, facts, act, ticks]);

  const show = (id) => {
    setShown(id);
    if (id) sessionStorage.setItem(remembered(ws.id), id);
    else sessionStorage.removeItem(remembered(ws.id));
  };
  const reload = () => setTicks((t) => t + 1);
  const current = list?.find((s) => s.id === shown) || null;
  useEffect(() => {
    if (list && shown && !current) show(''); // closed elsewhere
  }, [list, shown, current]);

  const open = () => create.run(async () => {
    const s = await api.create(ws.id, {});
    announce(`${s.label} opened`);
    setList((l) => [...(l || []).filter((x) => x.id !== s.id), s]);
    show(s.id);
  });

  if (!running) {
    return html`<section class="card term-section" aria-labelledby="term-title">
      <div class="card-head"><h2 id="term-title">Terminal</h2></div>
      <p class="pad muted">Start the workspace to open a shell in its folder.</p>
    </section>`;
  }
  return html`<section class="card term-section" aria-labelledby="term-title">
    <div class="card-head">
      <h2 id="term-title">Terminal ${list?.length ? html`<span class="count">${list.length}</span>` : null}</h2>
      <button type="button" class="btn btn-sm" disabled=${create.busy} onClick=${open}>
        <${Icon} name="plus" size=${16} />${create.busy ? 'Opening…' : 'New shell'}</button>
    </div>
    ${error || create.error ? html`<div class="pad-x"><${ErrorNote} error=${create.error || error} /></div>` : null}
    ${list === null && !error ? html`<p class="pad"><${Spinner} label="Loading shells" /></p>` : null}
    ${list?.length === 0 ? html`<p class="pad muted">No shell yet. A shell runs your login shell in the workspace's folder, with its keys and credentials, and keeps running when you leave the page.</p>` : null}
    ${list?.length ? html`<${Tabs} list=${list} shown=${shown} show=${show} />` : null}
    ${current ? html`<${ShellPanel} key=${current.id} ws=${ws} shell=${current} reload=${reload}
      rename=${() => setDialog('rename')} close=${() => setDialog('close')} />` : null}
    ${list?.length && !current ? html`<p class="pad muted">Choose a shell to show it.</p>` : null}
    ${dialog === 'rename' && current ? html`<${NameDialog} title="Rename shell" label="Name" initial=${current.label} maxlength="64"
      help="The name shows on its tab, on every device." onClose=${() => setDialog('')}
      problem=${(t) => !t ? 'A name cannot be empty.' : [...t].length > 64 ? 'A name holds at most 64 characters.' : /[\u0000-\u001f\u007f]/.test(t) ? 'A name cannot hold control characters.' : ''}
      save=${async (t) => { const s = await api.rename(ws.id, current.id, t); setList((l) => l.map((x) => (x.id === s.id ? s : x))); announce(`Renamed to ${t}`); }} />` : null}
    ${dialog === 'close' && current ? html`<${CloseDialog} ws=${ws} shell=${current} onClose=${() => setDialog('')}
      onDone=${() => { setList((l) => l.filter((x) => x.id !== current.id)); show(''); reload(); }} />` : null}
  </section>`;
}

/** Tabs are the shells, one tab each; arrow keys move between them. */
function Tabs({ list, shown, show }) {
  const key = (e) => {
    const i = list.findIndex((s) => s.id === shown);
    const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
    if (!step) return;
    e.preventDefault();
    const next = list[(Math.max(i, 0) + step + list.length) % list.length];
    show(next.id);
    e.currentTarget.querySelector(`[data-shell="${CSS.escape(next.id)}"]`)?.focus();
  };
  return html`<div class="term-tabs" role="tablist" aria-label="Shells" onKeyDown=${key}>
    ${list.map((s) => html`<button type="button" role="tab" key=${s.id} data-shell=${s.id} class="term-tab"
      id=${'term-tab-' + s.id} aria-selected=${s.id === shown} aria-controls=${s.id === shown ? 'term-panel' : undefined}
      tabindex=${s.id === shown || (!shown && s === list[0]) ? 0 : -1} onClick=${() => show(s.id)}>
      <${Icon} name="terminal" size=${15} /><span class="term-tab-label">${s.label}</span>
      ${s.readOnly ? html`<span class="tag">read-only</span>` : null}
      ${!s.running ? html`<span class="tag">exited</span>` : null}
    </button>`)}
  </div>`;
}

/** statusText says the connection's state in words ('' when live). */
function statusText(st, exit) {
  switch (st.state) {
    case 'connecting': return 'Connecting…';
    case 'waiting': return `Connection lost. Trying again in ${Math.ceil(st.retryIn / 1000)} s…`;
    case 'stopped': return 'The workspace is not running.';
    case 'closed': return 'This shell was closed.';
    case 'exited': return exit == null ? 'The shell exited.' : `The shell exited with code ${exit}.`;
  }
  return '';
}

const phoneQuery = '(max-width: 640px), (pointer: coarse)';

/** ShellPanel shows one shell: its state, its actions, the screen and, on a phone, the key bar. */
function ShellPanel({ ws, shell, reload, rename, close }) {
  const host = useRef(null);
  const [screen, setScreen] = useState(null);
  const [st, setSt] = useState({ state: 'connecting' });
  const [exit, setExit] = useState(shell.exitCode ?? null);
  const [failed, setFailed] = useState(null);
  const [ctrl, setCtrl] = useState(false);
  const [phone, setPhone] = useState(() => matchMedia(phoneQuery).matches);
  useEffect(() => {
    const mq = matchMedia(phoneQuery);
    const fn = () => setPhone(mq.matches);
    mq.addEventListener('change', fn);
    return () => mq.removeEventListener('change', fn);
  }, []);

  useEffect(() => {
    let ctl = null;
    let alive = true;
    const check = () => api.list(ws.id).then(
      (r) => (shellsOf(r).some((s) => s.id === shell.id) ? 'ok' : 'gone'),
      (e) => (e instanceof ApiError && e.status === 404 ? 'gone' : e.status === 503 || e.status === 401 ? 'stopped' : 'ok'));
    import('./screen.js').then((m) => {
      if (!alive) return;
      ctl = m.openScreen(host.current, ws.id, shell.id, {
        status: (s) => {
          setSt(s);
          if (s.state === 'exited' || s.state === 'closed') reload();
        },
        exited: (code) => setExit(code),
        check,
        ctrlUsed: () => setCtrl(false),
      });
      setScreen(ctl);
    }, (e) => { if (alive) setFailed(e); });
    return () => {
      alive = false;
      if (ctl) ctl.dispose();
    };
  }, [ws.id, shell.id]);

  const agent = shell.kind === 'agent';
  const words = statusText(st, exit);
  return html`<div class="term-panel" id="term-panel" role="tabpanel" aria-labelledby=${'term-tab-' + shell.id} data-state=${st.state}>
    <div class="term-bar">
      <span class="term-status" role="status">
        ${agent ? html`<span class="tag term-ro">Read-only: an agent's terminal</span>` : null}
        ${words ? html`<span class=${st.state === 'waiting' || st.state === 'stopped' ? 'term-warn' : 'muted'}>${words}</span>` : null}
      </span>
      ${st.state === 'waiting' || st.state === 'stopped' ? html`<button type="button" class="btn btn-sm btn-quiet" onClick=${() => screen?.wake()}>Reconnect now</button>` : null}
      ${agent ? null : html`<button type="button" class="btn btn-sm btn-quiet" aria-label=${`Rename ${shell.label}`} onClick=${rename}><${Icon} name="edit" size=${15} />Rename</button>
      <button type="button" class="btn btn-sm btn-quiet btn-danger-quiet" aria-label=${`Close ${shell.label}`} onClick=${close}><${Icon} name="x" size=${15} />Close</button>`}
    </div>
    ${failed ? html`<div class="pad-x"><${ErrorNote} error=${new Error('The terminal could not load. Reload the page to try again.')} /></div>` : null}
    <div class="term-host" ref=${host} aria-label=${`Terminal: ${shell.label}`} role="region"></div>
    ${phone && !agent ? html`<${KeyBar} screen=${screen} ctrl=${ctrl} setCtrl=${setCtrl} readOnly=${st.state === 'exited' || st.state === 'closed'} />` : null}
  </div>`;
}

/** CloseDialog asks before closing a shell: its process and what runs in it end. */
function CloseDialog({ ws, shell, onClose, onDone }) {
  const action = useAction();
  const go = () => action.run(async () => {
    await api.close(ws.id, shell.id);
    announce(`${shell.label} closed`);
    onClose();
    onDone();
  });
  return html`<${Confirm} title=${`Close ${shell.label}?`} confirm="Close shell" danger busy=${action.busy} error=${action.error}
    onConfirm=${go} onClose=${onClose}
    body=${html`<p>Its shell and whatever runs in it are stopped (hang-up, then killed after two seconds), on every device.</p>`} />`;
}
