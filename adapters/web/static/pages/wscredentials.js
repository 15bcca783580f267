// A workspace's credentials on its page: the names of the keys and tokens
// assigned to it (credentialAssignments of the Hub state), and, when the
// running session was started with other ones than it has now
// (credentialRestartRequired), a notice with a button that restarts it:
// the existing stop, then start. A linked worktree names the workspace
// whose credentials it uses instead.
import { html } from '../html.js';
import { hub } from '../api.js';
import { Link, wsPath } from '../router.js';
import { refresh, workspace } from '../model.js';
import { announce } from '../announce.js';
import { ErrorNote, Icon, useAction } from '../ui.js';

export function WorkspaceCredentials({ ws, running }) {
  const action = useAction();
  const ca = ws.credentialAssignments || { authentication: [], signing: [] };
  const restart = () => action.run(async () => {
    await hub.stop(ws.id);
    await hub.start(ws.id);
    announce(`${ws.displayName} restarted`);
    await refresh();
  });
  const none = !ca.authentication.length && !ca.signing.length;
  if (ws.parentId) {
    // A linked worktree has no credentials of its own: its sessions use
    // its repository's main workspace's, and assignments to it are refused.
    const parent = workspace(ws.parentId);
    return html`<div class="ws-creds">
      <p class="ws-creds-line"><${Icon} name="key" size=${16} />
        <span class="muted">Uses the credentials of</span>
        <${Link} href=${wsPath(ws.parentId)}>${parent?.displayName || ws.parentId}<//>
      </p>
    </div>`;
  }
  return html`<div class="ws-creds">
    <p class="ws-creds-line"><${Icon} name="key" size=${16} />
      ${none ? html`<span class="muted">No credentials assigned.</span>` : null}
      ${ca.authentication.length ? html`<span class="ws-cred-group"><span class="muted">Logs in with</span>
        ${ca.authentication.map((n) => html`<span class="tag" key=${n}>${n}</span>`)}</span>` : null}
      ${ca.signing.length ? html`<span class="ws-cred-group"><span class="muted">Signs with</span>
        ${ca.signing.map((n) => html`<span class="tag" key=${n}>${n}</span>`)}</span>` : null}
      <${Link} href="/credentials" class="small">Manage<//>
    </p>
    ${running && ws.credentialRestartRequired ? html`<div class="note note-warn ws-restart" role="status">
      <span>Restart required: this workspace's credentials changed since it started. It keeps the old ones until it restarts.</span>
      <button type="button" class="btn btn-sm" disabled=${action.busy} onClick=${restart}>${action.busy ? 'Restarting…' : 'Restart'}</button>
    </div>` : null}
    <${ErrorNote} error=${action.error} />
  </div>`;
}
