// The login offered where a conversation says its agent wants one (the
// New conversation picker, a conversation's page): a link to the Agents
// page at that agent, and, when the agent has one provider with one
// browser login, that login itself in place. Once it completes,
// onLoggedIn runs (the caller reads its agents again; the Hub also
// tells the workspaces, whose catalog revision then moves).
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { Link } from '../router.js';
import { Spinner } from '../ui.js';
import { attemptOf, busyState, loneLogin, useAccounts } from './accounts.js';
import { Attempt } from './attempt.js';
import { OAuthMethod } from './methods.js';

/** agentsPath is the Agents page at agent id. */
export const agentsPath = (id) => '/agents?agent=' + encodeURIComponent(id);

export function AgentLoginInline({ agentId, name, onLoggedIn }) {
  const acc = useAccounts();
  const [started, setStarted] = useState(false);
  const [hidden, setHidden] = useState('');
  const a = acc.snap?.agents.find((x) => x.agent === agentId) || null;
  const lone = loneLogin(a);
  const at = lone ? attemptOf(acc.snap, a.agent, lone.target.id) : null;
  const told = useRef('');
  useEffect(() => {
    if (at && at.state === 'complete' && told.current !== at.id) {
      told.current = at.id;
      if (onLoggedIn) onLoggedIn();
    }
  }, [at?.id, at?.state]);
  const link = html`<${Link} href=${agentsPath(agentId)}>Log ${name || agentId} in on the Agents page<//>`;
  let body = null;
  if (!acc.snap && !acc.error) body = html`<span class="muted small" role="status"><${Spinner} label="" /> Checking how it logs in…</span>`;
  else if (acc.snap && !a) body = html`<span class="muted small">Wharf cannot log it in: use its own command line on the Hub machine.</span>`;
  else if (a && busyState(a)) body = html`<span class="muted small" role="status"><${Spinner} label="" /> Starting its login interface…</span>`;
  const shown = at && !(at.state !== 'pending' && hidden === at.id) ? at : null;
  return html`<div class="acct-inline" data-login=${agentId}>
    <div class="acct-inline-line">
      ${lone && !(shown && shown.state === 'pending') ? html`<${OAuthMethod} a=${a} t=${lone.target} m=${lone.method} acc=${acc}
        onStarted=${() => setStarted(true)} />` : null}
      ${!acc.snap || a ? link : null}
      ${body}
    </div>
    ${shown ? html`<${Attempt} key=${shown.id} a=${a} t=${lone.target} at=${shown} label=${lone.method.label} acc=${acc}
      autoFocus=${started} onDismiss=${() => setHidden(shown.id)} />` : null}
  </div>`;
}
