// The open conversation, kept current: its snapshot (GET
// conversations/{cid}), then the conversation topic's events after the
// snapshot's cursor, applied by the reducer (convstate.js). On `resync`,
// or an event the reducer cannot apply, the stream stops delivering the
// conversation (parked), the snapshot is taken again and the stream
// resumes from the new cursor, so nothing is shown twice or lost. A
// dropped stream reconnects by itself with the last cursor (live.js).
import { useEffect, useState } from 'preact/hooks';
import { chat } from '../api.js';
import { changed, followConversation, parkConversation, resumeConversation, useModel } from '../model.js';
import { announce } from '../announce.js';
import { applyEvent, fromSnapshot, RELOAD } from './convstate.js';


/**
 * ConversationStore follows one conversation. phase is loading (no
 * snapshot yet), syncing (snapshot shown, the stream attaching), live,
 * refreshing (taking the snapshot again), unavailable (the workspace does
 * not answer; the Hub retries) or gone (no such conversation: closed).
 * error is why the last snapshot failed, shown while it is retried.
 */
export class ConversationStore {
  constructor(ws, cid) {
    this.ws = ws;
    this.cid = cid;
    this.state = null;
    this.phase = 'loading';
    this.error = null;
    this.loading = null;
    this.closed = false;
    this.following = false;
    this.probing = false;
    this.wake = null;
  }

  start() { this.load(); }

  /** close stops following the conversation (the page went away). */
  close() {
    this.closed = true;
    followConversation(null);
  }

  /** load takes the snapshot (again), retrying with backoff until it gets one. */
  load() {
    if (this.loading) return this.loading;
    this.loading = this.loadOnce().finally(() => { this.loading = null; });
    return this.loading;
  }

  async loadOnce() {
    if (this.following) {
      parkConversation();
      this.phase = 'refreshing';
      changed();
    }
    let snap = null;
    for (let attempt = 0; !this.closed; attempt++) {
      try {
        snap = await chat.snapshot(this.ws, this.cid);
        break;
      } catch (e) {
        if (this.closed) return;
        this.error = e;
        if (e.status === 404) {
          this.phase = 'gone';
          changed();
          return;
        }
        changed();
        if (e.status === 401) return; // the login page takes over
        await new Promise((resolve) => {
          const t = setTimeout(resolve, Math.min(1000 * 2 ** attempt, 15000));
          this.wake = () => { clearTimeout(t); resolve(); };
        });
        this.wake = null;
      }
    }
    if (this.closed || !snap) return;
    this.state = fromSnapshot(snap);
    this.error = null;
    this.phase = 'syncing';
    if (!this.following) {
      this.following = true;
      followConversation({ ws: this.ws, key: this.cid, cursor: snap.cursor, onEnvelope: (env) => this.envelope(env) });
    } else {
      resumeConversation(snap.cursor);
    }
    changed();
  }

  /** retryNow takes the snapshot now if it is waiting to try again (the workspace just started, say). */
  retryNow() {
    if (this.wake) this.wake();
  }

  /**
   * probe tells a conversation closed elsewhere from a workspace that
   * does not answer: the stream says `unavailable` for both, but only a
   * closed one is unknown to the snapshot (404). A closed one stops being
   * followed.
   */
  async probe() {
    if (this.probing) return;
    this.probing = true;
    try {
      await chat.snapshot(this.ws, this.cid);
    } catch (e) {
      if (e.status === 404 && !this.closed) {
        this.phase = 'gone';
        followConversation(null);
        changed();
      }
    } finally {
      this.probing = false;
    }
  }

  envelope(env) {
    if (this.closed || this.loading || !this.state) return; // parked: a new snapshot is on its way
    const ev = env.event;
    switch (ev.kind) {
      case 'data': {
        const before = this.state.conversation.status;
        if (applyEvent(this.state, ev.data) === RELOAD) this.load();
        else tell(ev.data, before);
        break;
      }
      case 'ready':
        this.phase = 'live';
        break;
      case 'unavailable':
        this.phase = 'unavailable';
        this.probe();
        break;
      case 'resync':
        this.load();
        break;
    }
    changed();
  }
}

const ENDED = { completed: 'The agent finished its turn', interrupted: 'The turn was stopped', failed: 'The turn failed' };

/**
 * tell says aloud, for screen readers, what a person watching would
 * notice: a request for them, and the end of a turn.
 */
function tell(ev, before) {
  if (ev.type === 'item.upsert' && ev.item.state === 'pending') {
    if (ev.item.kind === 'permission') announce(`The agent asks permission: ${ev.item.title || 'to go on'}`);
    if (ev.item.kind === 'question') announce(`The agent asks: ${ev.item.intro || 'a question'}`);
  }
  if (ev.type === 'conversation.status' && ev.status !== before && ENDED[ev.status]) announce(ENDED[ev.status]);
}

/**
 * useConversation follows conversation cid of workspace ws while the
 * calling component is mounted, and re-renders it on every change (at
 * most once a frame).
 */
export function useConversation(ws, cid) {
  useModel();
  const [store] = useState(() => new ConversationStore(ws, cid));
  useEffect(() => {
    store.start();
    return () => store.close();
  }, [store]);
  return store;
}
