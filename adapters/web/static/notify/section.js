// Settings › Notifications: push notifications on this device. It says
// plainly when the Hub or the browser cannot push; otherwise it enrolls
// this browser (permission, service worker, subscription), edits what it
// is told about and from which workspaces, sends a test and shows when
// the Hub last sent to it and when it last showed something.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from '../html.js';
import { notifications } from '../api.js';
import { useModel } from '../model.js';
import { announce } from '../announce.js';
import { ErrorNote, Spinner, relTime, useAction, useNow } from '../ui.js';
import { blocked, disable, enable, forget, permission, saved, support } from './push.js';

const unsupported = {
  ios: 'On an iPhone or iPad, push needs Wharf on the Home Screen: tap Share, then Add to Home Screen, and open Wharf from there.',
  insecure: 'Push needs the dashboard served over HTTPS (or opened on this machine, at localhost).',
  none: 'This browser cannot receive push notifications.',
};

/** How often, and how many times, a test's fate is read again. */
const TEST_POLL_MS = 1000;
const TEST_POLLS = 15;

export function NotificationsSection() {
  const [state, setState] = useState(null); // NotificationState
  const [error, setError] = useState(null);
  const [prefs, setPrefs] = useState({ needsAnswer: true, completed: true, allWorkspaces: true, workspaceIds: [] });
  const [waiting, setWaiting] = useState(false); // a test is on its way
  const action = useAction();
  const alive = useRef(true);
  useEffect(() => () => { alive.current = false; }, []);
  const can = support();

  const show = (s) => {
    if (!alive.current) return s;
    setState(s);
    setError(null);
    const d = s.device;
    if (d) setPrefs({ needsAnswer: d.needsAnswer, completed: d.completed, allWorkspaces: d.allWorkspaces, workspaceIds: d.workspaceIds });
    return s;
  };
  const read = () => {
    const mine = saved()?.device;
    return notifications.get(mine).then((s) => {
      if (mine && s.configured && !s.device) forget(); // the Hub no longer knows it: turning on makes a new one
      return show(s);
    });
  };
  useEffect(() => { read().catch(setError); }, []);

  const m = useModel();
  const workspaces = m.state?.workspaces || [];
  const known = new Set(workspaces.map((w) => w.id));
  const device = state?.device;

  const save = () => action.run(async () => {
    // Workspaces forgotten since they were chosen would be refused.
    const chosen = prefs.workspaceIds.filter((id) => known.has(id));
    if (!prefs.allWorkspaces && !chosen.length) throw new Error('Choose at least one workspace, or all of them.');
    show(await enable(state, { ...prefs, workspaceIds: chosen }));
    announce(device ? 'Notification settings saved' : 'Notifications turned on');
  });
  const off = () => action.run(async () => {
    await disable(device.id);
    await read();
    announce('Notifications turned off');
  });
  const test = () => action.run(async () => {
    const before = device;
    await notifications.test(before.id);
    announce('Test sent');
    follow(before);
  });
  // follow reads the device again until it has shown the test, a
  // bounded number of times, without holding the buttons.
  const follow = async (before) => {
    setWaiting(true);
    for (let i = 0; i < TEST_POLLS && alive.current; i++) {
      await new Promise((r) => setTimeout(r, TEST_POLL_MS));
      // The device's times only: what the person is editing stays.
      const s = await notifications.get(before.id).catch(() => null);
      if (s && alive.current) setState(s);
      if (s?.device?.id === before.id && s.device.lastAcknowledgedAt !== before.lastAcknowledgedAt) break;
    }
    if (alive.current) setWaiting(false);
  };

  const set = (patch) => setPrefs((p) => ({ ...p, ...patch }));
  const pick = (id, on) => set({ workspaceIds: on ? [...prefs.workspaceIds.filter((w) => w !== id), id] : prefs.workspaceIds.filter((w) => w !== id) });
  const check = (name, checked, onChange, label) => html`<label class="check"><input type="checkbox" name=${name} checked=${checked}
    onChange=${(e) => onChange(e.currentTarget.checked)} />${label}</label>`;

  return html`<section class="card pad notify" aria-labelledby="notify-title">
    <h2 id="notify-title">Notifications</h2>
    <p class="muted">This device can tell you when an agent needs your answer or has finished, from the workspaces you
      choose, while you are not watching the dashboard.</p>
    ${can !== 'ok' ? html`<p class="note note-warn" data-note="device">${unsupported[can]}</p>` : null}
    ${state && !state.configured ? html`<p class="note note-info" data-note="hub"><span>This Hub has no push contact. The operator
      sets one with <code>wharf serve --push-contact mailto:you@example.com</code> (or <code>WHARF_PUSH_CONTACT</code>).</span></p>` : null}
    <${ErrorNote} error=${error} />
    ${!state && !error ? html`<${Spinner} label="Loading notifications" />` : null}
    ${state?.configured && can === 'ok' ? html`
      ${permission() === 'denied' ? html`<p class="note note-warn">${blocked}</p>` : null}
      ${device ? html`<${Status} device=${device} waiting=${waiting} />` : null}
      <fieldset class="field"><legend class="field-label">Tell me when</legend>
        ${check('needsAnswer', prefs.needsAnswer, (v) => set({ needsAnswer: v }), 'An agent needs an answer')}
        ${check('completed', prefs.completed, (v) => set({ completed: v }), 'An agent has finished its turn')}
      </fieldset>
      <fieldset class="field"><legend class="field-label">From</legend>
        ${check('allWorkspaces', prefs.allWorkspaces, (v) => set({ allWorkspaces: v }), 'All workspaces, and those added later')}
        ${prefs.allWorkspaces ? null : html`<div class="notify-ws">
          ${workspaces.length ? workspaces.map((w) => html`<label class="check" key=${w.id}><input type="checkbox" name="workspace"
            value=${w.id} checked=${prefs.workspaceIds.includes(w.id)} onChange=${(e) => pick(w.id, e.currentTarget.checked)} />
            <span class="notify-ws-name">${w.displayName}</span></label>`) : html`<p class="muted small">No workspace yet.</p>`}
        </div>`}
      </fieldset>
      <div class="row">
        <button type="button" class="btn btn-primary" disabled=${action.busy} onClick=${save}>${device ? 'Save' : 'Turn on'}</button>
        ${device ? html`<button type="button" class="btn" disabled=${action.busy} onClick=${test}>Send a test</button>
          <button type="button" class="btn btn-quiet" disabled=${action.busy} onClick=${off}>Turn off</button>` : null}
      </div>
      <${ErrorNote} error=${action.error} />` : null}
  </section>`;
}

/** Status tells whether the device receives notifications, and when it last got one. */
function Status({ device, waiting }) {
  const now = useNow(15000);
  const when = (t) => (t ? html`<time datetime=${t} title=${new Date(t).toLocaleString()}>${relTime(Date.parse(t), now)}</time>` : 'never');
  return html`<div class="notify-status">
    <p>${device.active ? html`<span class="tag tag-current">On</span> for this device.`
      : html`<span class="tag">Paused</span> Turned on under an earlier sign-in, or every workspace it covers is gone: save to resume.`}</p>
    <p class="small muted">Last sent: <span data-at="sent">${when(device.lastSentAt)}</span> ·
      last shown here: <span data-at="shown">${when(device.lastAcknowledgedAt)}</span>
      ${waiting ? html` · <${Spinner} label="Waiting for the test" />` : null}</p>
  </div>`;
}
