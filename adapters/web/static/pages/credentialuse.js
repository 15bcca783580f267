// How a credential is used, on its row of the Credentials page: the use
// policy of each assignment, changed in place (the credential assigned
// again where it is, with the new policy: it applies to the next use,
// without a restart), and its use log (hubListCredentialUses), the newest
// uses first with when, which workspace, what for, and what became of
// each. The log is read while it is open and the page visible, every few
// seconds and at once after an answer given in the approvals banner.
import { useEffect, useState } from 'preact/hooks';
import { html } from '../html.js';
import { creds } from '../api.js';
import { Link, wsPath } from '../router.js';
import { announce } from '../announce.js';
import { ErrorNote, Spinner, relTime, useAction, usePoll } from '../ui.js';
import { onDecided, policies, policyName, purposeText, wsName } from '../approvals.js';

/** How often an open use log is read again. */
const LOG_POLL_MS = 5000;

/**
 * PolicySelect shows assignment a's use policy and changes it; label
 * names the assignment for screen readers, onChanged reads the list again.
 */
export function PolicySelect({ cred, a, label, onChanged }) {
  const action = useAction();
  const change = (e) => {
    const usePolicy = e.currentTarget.value;
    action.run(async () => {
      const req = { workspaceId: a.workspaceId, role: a.role, usePolicy };
      if (a.role === 'authentication') req.host = a.host;
      await creds.assign(cred.id, req);
      announce(`${cred.name} in ${wsName(a.workspaceId)}: ${policyName(usePolicy)}`);
      await onChanged();
    });
  };
  return html`<span class="policy-pick">
    <select class="policy-select" value=${a.usePolicy} disabled=${action.busy} onChange=${change} aria-label=${label}
      title="When the workspace may use it">
      ${policies.map(([p, name]) => html`<option key=${p} value=${p}>${name}</option>`)}
    </select>
    ${action.error ? html`<${ErrorNote} error=${action.error} />` : null}
  </span>`;
}

/** outcomeOf says what became of a use, in words, with its look. */
function outcomeOf(u) {
  const by = u.by ? ` by ${u.by}` : '';
  switch (u.outcome) {
    case 'allowed-by-policy': return ['ok', 'Allowed by its policy'];
    case 'allowed-earlier': return ['ok', 'Allowed earlier this session'];
    case 'allowed': return ['ok', `Allowed${by}`];
    case 'denied': return ['no', `Denied${by}`];
    case 'timed-out': return ['no', 'Not answered in time'];
    case 'refused': return ['no', 'Refused: too many uses were waiting'];
    default: return ['no', u.outcome];
  }
}

/** when says when a use was: the time today, else the date and time. */
function when(ms) {
  const d = new Date(ms);
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString() : d.toLocaleString();
}

/** UseLog is credential cred's use log, read while it is shown. */
export function UseLog({ cred, id }) {
  const [uses, setUses] = useState(null);
  const [error, setError] = useState(null);
  const poll = usePoll(async () => {
    try {
      const r = await creds.uses(cred.id);
      setUses(r.uses);
      setError(null);
    } catch (e) {
      setError(e);
      throw e;
    }
  }, LOG_POLL_MS);
  useEffect(() => onDecided(poll), []);
  return html`<section class="use-log" id=${id} aria-label=${`Use log of ${cred.name}`}>
    <${ErrorNote} error=${error} />
    ${!uses && !error ? html`<${Spinner} label="Loading the use log" />` : null}
    ${uses && !uses.length ? html`<p class="muted small use-empty">No use yet. Every login, signature or token a workspace asks
      for shows here, with what became of it; the Hub keeps the newest 200 until it restarts.</p>` : null}
    ${uses && uses.length ? html`<ol class="uses">${uses.map((u, i) => {
      const [look, said] = outcomeOf(u);
      return html`<li key=${u.at + i} class=${'use use-' + look}>
        <time class="use-at muted small" datetime=${u.at} title=${relTime(Date.parse(u.at))}>${when(Date.parse(u.at))}</time>
        <${Link} class="use-ws" href=${wsPath(u.workspaceId)}>${wsName(u.workspaceId)}<//>
        <span class="use-what">${purposeText(u.purpose, u.host)}</span>
        <span class="use-outcome">${said}</span>
      </li>`;
    })}</ol>` : null}
  </section>`;
}
