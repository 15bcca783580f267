// The dashboard's one live stream (GET /api/hub/live), kept open across
// failures. It keeps the cursor of every subscription, advancing it only
// on `data` events, and reconnects with backoff presenting every kept
// cursor in `subs`, so the Hub replays what was missed (or says
// `resync`). Subscriptions change without reconnecting through
// POST /api/hub/live/{streamId}/subscriptions; a change the stream cannot
// take reconnects with the whole set, as the contract says.
//
// A conversation subscription starts from the cursor of the snapshot its
// owner took, and after a `resync` it is parked (neither presented nor
// followed) until the owner has taken a new snapshot and resubscribes
// with that snapshot's cursor: an empty cursor would start from the
// conversation's head and lose what happened in between.

import { SSEParser } from './sse.js';
import { hub, ApiError } from './api.js';
import { TOPICS, ACTIVITY, CONVERSATION } from './topics.js';

const KNOWN_TOPICS = new Set(TOPICS);
const KINDS = new Set(['data', 'ready', 'resync', 'unavailable']);

/** Backoff between connections: 1 s doubling to 15 s, reset by a hello. */
const MIN_BACKOFF = 1000;
const MAX_BACKOFF = 15000;
/** Three missed keepalives (the Hub writes one every 15 s): the connection is dead. */
const IDLE_MS = 45000;
/** Tries of one subscription change that gets a 5xx or no answer. */
const CHANGE_TRIES = 3;

const subKey = (topic, key) => topic + '\n' + (key || '');

/**
 * LiveStream follows one workspace's stream. Its owner tells it what to
 * follow with want(); it reports envelopes, its state and the refusals
 * that another connection would not mend.
 */
export class LiveStream {
  /**
   * @param {object} h handlers
   * @param {(env: object) => void} h.onEnvelope every known envelope, in order
   * @param {(s: {state: string, message?: string, retryAt?: number}) => void} h.onStatus
   * @param {(ws: string) => void} h.onGone the stream's workspace is unknown (404)
   * @param {() => void} h.onExpired the session is gone (401)
   */
  constructor(h) {
    this.h = h;
    this.ws = '';
    this.subs = new Map(); // wanted: key -> {topic, key, cursor}
    this.sent = new Set(); // keys the current connection has
    this.gen = 0;
    this.abort = null;
    this.streamId = '';
    this.delay = MIN_BACKOFF;
    this.timer = 0;
    this.watchdog = 0;
    this.syncing = Promise.resolve();
    this.status = { state: 'idle' };
    this.everConnected = false;
    this.wake = () => {
      if (this.ws && this.status.state === 'reconnecting') this.connect();
    };
    this.shown = () => { if (!document.hidden) this.wake(); };
    window.addEventListener('online', this.wake);
    document.addEventListener('visibilitychange', this.shown);
  }

  /**
   * want sets the workspace and the subscriptions ({topic, key?,
   * cursor?}) to follow. Another workspace opens a new stream; the same
   * one changes the subscriptions in place, keeping the cursor of each
   * subscription it already follows (a new one starts at its cursor, or
   * at none). An empty ws closes the stream.
   */
  want(ws, subs) {
    const next = new Map();
    for (const s of subs) {
      const k = subKey(s.topic, s.key);
      const kept = ws === this.ws ? this.subs.get(k) : null;
      next.set(k, kept || { topic: s.topic, key: s.key, cursor: s.cursor || '', parked: false });
    }
    if (ws !== this.ws) {
      this.ws = ws;
      this.subs = next;
      this.everConnected = false;
      if (ws) this.connect();
      else this.stop({ state: 'idle' });
      return;
    }
    this.subs = next;
    this.sync();
  }

  /**
   * resubscribe follows one subscription again from cursor: for most
   * topics an empty one (the Hub sends a fresh snapshot), for a
   * conversation the cursor of the snapshot its owner just took.
   */
  resubscribe(topic, key, cursor = '') {
    const s = this.subs.get(subKey(topic, key));
    if (!s) return;
    s.cursor = cursor;
    s.parked = false;
    this.sent.delete(subKey(topic, key));
    this.sync();
  }

  /**
   * park stops following one subscription until resubscribe: nothing of
   * it reaches the owner any more, the connection drops it, and a new
   * connection leaves it out.
   */
  park(topic, key) {
    const s = this.subs.get(subKey(topic, key));
    if (!s || s.parked) return;
    s.parked = true;
    this.sync();
  }

  /** close ends the stream for good (sign-out). */
  close() {
    this.ws = '';
    this.stop({ state: 'idle' });
    window.removeEventListener('online', this.wake);
    document.removeEventListener('visibilitychange', this.shown);
  }

  setStatus(s) {
    this.status = s;
    this.h.onStatus(s);
  }

  stop(status) {
    this.gen++;
    clearTimeout(this.timer);
    clearTimeout(this.watchdog);
    if (this.abort) this.abort.abort();
    this.abort = null;
    this.streamId = '';
    this.sent = new Set();
    this.setStatus(status);
  }

  /** retry schedules the next connection after the backoff delay. */
  retry(message) {
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, MAX_BACKOFF);
    this.stop({ state: 'reconnecting', message, retryAt: Date.now() + delay });
    const gen = this.gen;
    this.timer = setTimeout(() => { if (gen === this.gen) this.connect(); }, delay + Math.random() * 250);
  }

  url() {
    const subs = [...this.subs.values()].filter((s) => !s.parked).map((s) => {
      const o = { topic: s.topic, cursor: s.cursor };
      if (s.key) o.key = s.key;
      return o;
    });
    const q = new URLSearchParams({ ws: this.ws, activity: '1', subs: JSON.stringify(subs) });
    if (this.everConnected) q.set('reconnect', '1');
    return '/api/hub/live?' + q.toString();
  }

  /** connect opens a new connection now (also what "Retry now" does). */
  async connect() {
    this.stop({ state: this.everConnected ? 'reconnecting' : 'connecting' });
    const gen = this.gen;
    const ctl = new AbortController();
    this.abort = ctl;
    const sentKeys = new Set([...this.subs].filter(([, s]) => !s.parked).map(([k]) => k));
    let res;
    try {
      res = await fetch(this.url(), {
        credentials: 'same-origin', cache: 'no-store', signal: ctl.signal,
        headers: { Accept: 'text/event-stream' },
      });
    } catch {
      if (gen === this.gen) this.retry('The Hub did not answer.');
      return;
    }
    if (gen !== this.gen) return;
    if (res.status !== 200) {
      const body = await res.json().catch(() => null);
      if (gen !== this.gen) return;
      const msg = body && body.error ? body.error : `status ${res.status}`;
      if (res.status === 401) {
        this.stop({ state: 'idle' });
        this.h.onExpired();
      } else if (res.status === 404) {
        this.stop({ state: 'connecting' });
        this.h.onGone(this.ws);
      } else {
        // 429 (too many streams), a proxy's 502, a 503: try again later.
        // 400 and 403 would fail the same way; still retry, slowly, so a
        // Hub upgraded under the page gets another chance.
        if (res.status === 400 || res.status === 403) this.delay = MAX_BACKOFF;
        this.retry(`The live stream was refused: ${msg}`);
      }
      return;
    }
    this.sent = sentKeys;
    this.everConnected = true;
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SSEParser((name, data) => { if (gen === this.gen) this.event(gen, name, data); });
    const arm = () => {
      clearTimeout(this.watchdog);
      this.watchdog = setTimeout(() => { if (gen === this.gen) this.retry('The stream went silent.'); }, IDLE_MS);
    };
    arm();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (gen !== this.gen) return;
        if (done) break;
        arm();
        parser.push(decoder.decode(value, { stream: true }));
      }
    } catch {
      // aborted or cut: below
    }
    if (gen === this.gen) this.retry('The connection to the Hub was lost.');
  }

  event(gen, name, data) {
    if (name === 'hello') {
      let hello;
      try { hello = JSON.parse(data); } catch { hello = null; }
      if (!hello || !hello.streamId) {
        this.retry('The Hub sent a malformed hello.');
        return;
      }
      this.streamId = hello.streamId;
      this.delay = MIN_BACKOFF;
      this.setStatus({ state: 'live' });
      this.sync();
      return;
    }
    if (name !== 'live' || !this.streamId) return; // unknown events: this page is out of date
    let env;
    try { env = JSON.parse(data); } catch { return; }
    if (!env || !KNOWN_TOPICS.has(env.topic) || !env.event || !KINDS.has(env.event.kind)) return;
    if (env.topic !== ACTIVITY) {
      const s = this.subs.get(subKey(env.topic, env.key));
      if (!s || !this.sent.has(subKey(env.topic, env.key))) return; // removed meanwhile
      if (env.event.kind === 'data') s.cursor = env.cursor;
      if (env.event.kind === 'resync') {
        // Detached until added again. A conversation waits for its
        // owner's new snapshot; other topics ask for the current state.
        if (env.topic === CONVERSATION) {
          s.parked = true;
          this.sent.delete(subKey(env.topic, env.key));
        } else {
          this.resubscribe(env.topic, env.key);
        }
      }
    }
    this.h.onEnvelope(env);
  }

  /**
   * sync brings the connection's subscriptions to the wanted set, one
   * change at a time. A change the stream cannot take (400, 403, 404)
   * reconnects with the whole set; a 5xx or no answer is tried again a
   * few times, then reconnects too.
   */
  sync() {
    this.syncing = this.syncing.then(() => this.syncOnce()).catch(() => {});
  }

  async syncOnce() {
    const gen = this.gen;
    if (!this.streamId) return; // the next connection sends the whole set
    const remove = [];
    for (const k of this.sent) {
      if (!this.subs.has(k) || this.subs.get(k).parked) {
        const [topic, key] = k.split('\n');
        remove.push(key ? { topic, key } : { topic });
      }
    }
    const add = [];
    const adding = [];
    for (const [k, s] of this.subs) {
      if (this.sent.has(k) || s.parked) continue;
      const o = { topic: s.topic, cursor: s.cursor };
      if (s.key) o.key = s.key;
      add.push(o);
      adding.push(k);
    }
    if (!add.length && !remove.length) return;
    // The connection's set changes now, not when the answer comes: the
    // Hub may write a new subscription's snapshot before it answers, and
    // stops writing a removed one's before it answers.
    for (const r of remove) this.sent.delete(subKey(r.topic, r.key));
    for (const k of adding) this.sent.add(k);
    for (let attempt = 1; ; attempt++) {
      try {
        await hub.liveSubscriptions(this.streamId, { add, remove });
        return;
      } catch (e) {
        if (gen !== this.gen) return;
        const status = e instanceof ApiError ? e.status : 0;
        if (status === 401) return; // the request already sent the user to log in
        if (status === 400 || status === 403 || status === 404 || attempt >= CHANGE_TRIES) {
          this.connect();
          return;
        }
        await new Promise((r) => setTimeout(r, 500 * 2 ** attempt));
        if (gen !== this.gen) return;
      }
    }
  }
}
