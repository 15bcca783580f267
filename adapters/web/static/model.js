// What the dashboard knows of the Hub, kept current: the Hub state
// (GET /api/hub/state), every workspace's activity and, on a workspace's
// page, its document state and conversation inventory ticks, all from one
// live stream, which also carries the open conversation's events to the
// conversation page (chat/store.js). Components read the model and
// re-render when it changes; changes that arrive together (100 activity
// changes in a second, say) are drawn once per animation frame.
import { useEffect, useState } from 'preact/hooks';
import { hub, ApiError, sessionExpired } from './api.js';
import { LiveStream } from './live.js';
import { newDocState, applyUpdate, RESYNC } from './docstate.js';
import { announce } from './announce.js';
import { ACTIVITY, CONVERSATION, DOCUMENT, INVENTORY, WORKTREES } from './topics.js';

/** How often the Hub state is read again without a live reason to. */
const POLL_EMPTY_MS = 3000; // no workspace: no live stream can open, as it needs a `ws`
const POLL_MS = 30000; // renames and forgets by other clients carry no live event

export const model = {
  /** @type {object|null} the last HubState; null until the first answer */
  state: null,
  /** @type {ApiError|null} why the last read of the state failed */
  stateError: null,
  /** @type {Map<string, {running:boolean, working:boolean, awaiting:boolean, finished:boolean}>} */
  activity: new Map(),
  /** the live stream's status: {state: idle|connecting|live|reconnecting, message?, retryAt?} */
  live: { state: 'idle' },
  /** the followed workspace's document state: {ws, doc, status} or null */
  doc: null,
  /**
   * the followed workspace's conversation inventory: {ws, ticks, catalogs,
   * status}. ticks grows at `ready` and at every inventory event, each a
   * reason to read the conversation list again; catalogs is the last
   * event's catalog revision by agent id.
   */
  inventory: null,
  /**
   * the followed workspace's worktree inventory ticks: {ws, ticks}; ticks
   * grows at every invalidation of the worktrees topic, each a reason to
   * read the inventory again.
   */
  worktrees: null,
  /** grows with every change */
  version: 0,
};

const listeners = new Set();
let frame = 0;

/** changed schedules one notification for everything changed this frame. */
export function changed() {
  model.version++;
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    for (const fn of listeners) fn(model.version);
  });
}

/** useModel re-renders the calling component whenever the model changes. */
export function useModel() {
  const [, set] = useState(0);
  useEffect(() => {
    listeners.add(set);
    return () => listeners.delete(set);
  }, []);
  return model;
}

let stream = null;
let focus = ''; // the workspace whose page is open
let withDocs = true; // whether its page shows its documents
let conversation = null; // the open conversation: {ws, key, cursor, onEnvelope}
let pollTimer = 0;
let reading = null;
// queued is the one read asked for while another was in flight: that one
// may have been answered before what prompted the ask (a session that
// ended, with its endedReason), so a second read follows it.
let queued = null;
let started = false;

/** workspace returns the registered workspace id, or undefined. */
export function workspace(id) {
  return model.state?.workspaces.find((w) => w.id === id);
}

/** activityOf returns what the live stream last said of id, if anything. */
export function activityOf(id) {
  return model.activity.get(id);
}

/** start reads the state and opens the live stream (after a login). */
export function start() {
  if (started) return;
  started = true;
  stream = new LiveStream({
    onEnvelope: envelope,
    onStatus: (s) => { model.live = s; changed(); },
    onGone: () => refresh(),
    onExpired: () => sessionExpired(),
  });
  refresh();
}

// Coming back to the page (a phone unlocked, a tab shown): read the state
// again rather than wait for the next poll.
document.addEventListener('visibilitychange', () => { if (!document.hidden && started) refresh(); });

/** stop forgets everything (sign-out, expired session). */
export function stop() {
  started = false;
  clearTimeout(pollTimer);
  if (stream) stream.close();
  stream = null;
  focus = '';
  conversation = null;
  Object.assign(model, { state: null, stateError: null, activity: new Map(), live: { state: 'idle' }, doc: null, inventory: null });
  changed();
}

/**
 * refresh reads the Hub state again and points the live stream where it
 * should be. Calls made while a read is in flight share one more read
 * after it, which their promise waits for.
 */
export function refresh() {
  if (!started) return Promise.resolve();
  if (reading) {
    // Whether or not the read in flight failed (a page's render throwing
    // in changed), the queued read follows it and lets the next one queue.
    if (!queued) queued = reading.catch(() => {}).then(() => { queued = null; return refresh(); });
    return queued;
  }
  reading = (async () => {
    try {
      const old = model.state;
      model.state = await hub.state();
      if (old) {
        const known = new Set(old.workspaces.map((w) => w.id));
        for (const w of model.state.workspaces) if (!known.has(w.id)) announce(`New workspace: ${w.displayName}`);
      }
      model.stateError = null;
    } catch (e) {
      model.stateError = e instanceof ApiError ? e : new ApiError(0, String(e));
    } finally {
      reading = null;
    }
    if (!started) return;
    for (const id of model.activity.keys()) {
      if (!workspace(id)) model.activity.delete(id);
    }
    aim();
    clearTimeout(pollTimer);
    pollTimer = setTimeout(refresh, model.state && model.state.workspaces.length ? POLL_MS : POLL_EMPTY_MS);
    changed();
  })();
  return reading;
}

/** reconnectNow skips the wait before the stream's next attempt. */
export function reconnectNow() {
  if (stream && stream.status.state === 'reconnecting') stream.connect();
}

/**
 * follow makes id's conversation inventory, and its documents unless
 * documents is false, part of the stream (id '' stops that).
 */
export function follow(id, documents = true) {
  focus = id;
  withDocs = documents;
  if (!id || !documents) model.doc = null;
  else if (!model.doc || model.doc.ws !== id) model.doc = { ws: id, doc: newDocState(), status: 'waiting' };
  if (!id) model.inventory = null;
  else if (!model.inventory || model.inventory.ws !== id) model.inventory = { ws: id, ticks: 0, catalogs: {}, status: 'waiting' };
  if (!id) model.worktrees = null;
  else if (!model.worktrees || model.worktrees.ws !== id) model.worktrees = { ws: id, ticks: 0 };
  aim();
  changed();
}

/**
 * followConversation adds the open conversation to the stream, from the
 * cursor of the snapshot its owner took; onEnvelope gets its envelopes.
 * null stops following it.
 */
export function followConversation(c) {
  conversation = c;
  aim();
}

/** parkConversation stops the open conversation's events until resumeConversation. */
export function parkConversation() {
  if (stream && conversation) stream.park(CONVERSATION, conversation.key);
}

/** resumeConversation follows the open conversation again from a new snapshot's cursor. */
export function resumeConversation(cursor) {
  if (!conversation) return;
  conversation.cursor = cursor;
  if (stream) stream.resubscribe(CONVERSATION, conversation.key, cursor);
}

/**
 * aim points the stream: at the open workspace with its documents, else
 * at any registered workspace for the activity topic alone (the stream
 * needs one: `ws` is required). With no workspace there is no stream;
 * the state is polled instead.
 */
function aim() {
  if (!stream || !model.state) return;
  const ids = model.state.workspaces.map((w) => w.id);
  if (focus && ids.includes(focus)) {
    const subs = [{ topic: INVENTORY }, { topic: WORKTREES }];
    if (withDocs) subs.push({ topic: DOCUMENT });
    const c = conversation;
    if (c && c.ws === focus) subs.push({ topic: CONVERSATION, key: c.key, cursor: c.cursor });
    stream.want(focus, subs);
    return;
  }
  const anchor = ids.includes(stream.ws) ? stream.ws : ids[0] || '';
  stream.want(anchor, []);
}

function envelope(env) {
  const ev = env.event;
  if (env.topic === ACTIVITY) {
    if (ev.kind !== 'data') return;
    const before = model.activity.get(env.ws);
    model.activity.set(env.ws, ev.data);
    const w = workspace(env.ws);
    // Registered since, or stopped (its activity said running, or the
    // state read says so, read before it stopped): read why (endedReason).
    if (!w || (!ev.data.running && (before?.running || w.running))) refresh();
    else if (before && ev.data.awaiting && !before.awaiting) announce(`${w.displayName} awaits you`);
    else if (before && ev.data.finished && !before.finished) announce(`${w.displayName} finished`);
    changed();
    return;
  }
  if (env.topic === CONVERSATION) {
    const c = conversation;
    if (c && c.ws === env.ws && c.key === env.key) c.onEnvelope(env);
    return;
  }
  if (env.topic === WORKTREES) {
    const w = model.worktrees;
    if (w && w.ws === env.ws && ev.kind === 'data') {
      w.ticks++;
      changed();
    }
    return;
  }
  if (env.topic === INVENTORY) {
    const inv = model.inventory;
    if (!inv || inv.ws !== env.ws) return;
    if (ev.kind === 'data') {
      inv.ticks++;
      inv.catalogs = (ev.data && ev.data.catalogs) || {};
      inv.status = 'live';
    } else if (ev.kind === 'ready') {
      inv.ticks++;
      inv.status = 'live';
    } else if (ev.kind === 'unavailable') {
      inv.status = 'unavailable';
    }
    changed();
    return;
  }
  if (env.topic !== DOCUMENT || !model.doc || model.doc.ws !== env.ws) return;
  const d = model.doc;
  switch (ev.kind) {
    case 'data':
      if (applyUpdate(d.doc, ev.data) === RESYNC) {
        d.status = 'refreshing';
        stream.resubscribe(DOCUMENT);
      } else if (d.status !== 'live' && d.doc.epoch) {
        d.status = 'live';
      }
      break;
    case 'ready':
      d.status = 'live';
      break;
    case 'unavailable':
      d.status = 'unavailable';
      break;
    case 'resync':
      d.status = 'refreshing';
      break;
  }
  changed();
}
