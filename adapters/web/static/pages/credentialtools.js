// The tools credentials rely on (hubListCredentialTools): each one's
// readiness, where it was found, its version and what to do when it is
// missing; an override path set or cleared (hubSetCredentialTool), and a
// new probe (hubTestCredentialTool). A missing tool is no failure of the
// page: it says so on its own row.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { creds } from '../api.js';
import { announce } from '../announce.js';
import { ErrorNote, Spinner, useAction } from '../ui.js';

/** readyOf sums readiness results up: ready when every one is (or does not apply). */
export function readyOf(results) {
  return results.every((r) => r.status !== 'unavailable');
}

export function Tools() {
  const [tools, setTools] = useState(null);
  const [error, setError] = useState(null);
  const load = () => creds.tools().then((r) => { setTools(r.tools); setError(null); }, setError);
  useEffect(() => { load(); }, []);
  return html`<section class="card tools" aria-labelledby="tools-title">
    <div class="card-head"><h2 id="tools-title">Tools</h2></div>
    <p class="pad-x muted small tools-lead">Keys are held and used by the Hub itself; these programs are what workspaces run
      around them (Git, the GitHub and GitLab CLIs) and what older setups used. Wharf never falls back to PATH for a tool
      you set a path for.</p>
    ${error ? html`<div class="pad"><${ErrorNote} error=${error} /></div>` : null}
    ${!tools && !error ? html`<p class="pad"><${Spinner} label="Loading tools" /></p>` : null}
    ${tools ? html`<ul class="tool-list">${tools.map((t) => html`<${Tool} key=${t.tool} t=${t} reload=${load} />`)}</ul>` : null}
  </section>`;
}

function Tool({ t, reload }) {
  const [editing, setEditing] = useState(false);
  const [path, setPath] = useState('');
  const action = useAction();
  const ready = readyOf(t.results);
  const done = async (msg) => {
    announce(msg);
    setEditing(false);
    await reload();
  };
  const save = (e) => {
    e.preventDefault();
    const p = path.trim();
    if (!p.startsWith('/')) { action.setError(new Error('Type an absolute path, starting with /.')); return; }
    action.run(async () => { await creds.setTool(t.tool, p); await done(`${t.tool} set to ${p}`); });
  };
  const clear = () => action.run(async () => { await creds.setTool(t.tool, null); await done(`${t.tool} found on PATH again`); });
  const test = () => action.run(async () => { await creds.testTool(t.tool); await done(`${t.tool} tested`); });
  const edit = () => { setPath(t.path || ''); action.setError(null); setEditing(true); };
  return html`<li class="tool" data-tool=${t.tool}>
    <div class="tool-head">
      <code class="tool-name">${t.tool}</code>
      <span class=${'badge ' + (ready ? 'badge-running' : 'badge-stopped')}><span class="dot" aria-hidden="true"></span>${ready ? 'Ready' : 'Unavailable'}</span>
      ${t.version ? html`<span class="muted small tool-version">${t.version}</span>` : null}
    </div>
    <div class="tool-path muted small">${t.path ? html`<code>${t.path}</code>` : 'Not found'}</div>
    <ul class="readiness">${t.results.map((r, i) => html`<li key=${i} class=${'ready-' + r.status}>${r.message}</li>`)}</ul>
    ${t.guidance ? html`<p class="small tool-guidance">${t.guidance}</p>` : null}
    ${editing ? html`<form class="row tool-form" onSubmit=${save}>
      <label class="field field-grow"><span class="field-label">Path of ${t.tool}</span>
        <input autofocus value=${path} spellcheck=${false} autocapitalize="none" placeholder=${`/usr/bin/${t.tool}`}
          onInput=${(e) => setPath(e.currentTarget.value)} /></label>
      <button type="submit" class="btn btn-sm btn-primary" disabled=${action.busy}>Save</button>
      <button type="button" class="btn btn-sm" disabled=${action.busy} onClick=${clear}
        title="Forget the path set here and find the tool on PATH">Clear override</button>
      <button type="button" class="btn btn-sm btn-quiet" onClick=${() => setEditing(false)}>Cancel</button>
    </form>` : html`<div class="tool-actions">
      <button type="button" class="btn btn-sm btn-quiet" onClick=${edit} aria-label=${`Set the path of ${t.tool}`}>Set path</button>
      <button type="button" class="btn btn-sm btn-quiet" disabled=${action.busy} onClick=${test}
        aria-label=${`Test ${t.tool} again`}>${action.busy ? 'Testing…' : 'Test again'}</button>
    </div>`}
    <${ErrorNote} error=${action.error} />
  </li>`;
}
