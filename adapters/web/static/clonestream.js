// A clone job's event stream (hubStreamCloneJobEvents), kept open across
// failures until the job's `result`. Every event carries the job's
// integer id; a reconnect sends the id of the last event seen as
// Last-Event-ID, so the Hub replays only what was missed, and a fresh
// page (a reload, another device) starts from 0 and gets everything the
// Hub retains. Read with fetch, as the live stream is (sse.js says why):
// a 404 (unknown, expired or another user's job) must be told apart from
// a network failure.

import { SSEParser } from './sse.js';
import { clones, sessionExpired } from './api.js';

const MIN_BACKOFF = 1000;
const MAX_BACKOFF = 15000;
/** Three missed keepalives (the Hub writes one every 15 s while idle). */
const IDLE_MS = 45000;

export class CloneStream {
  /**
   * @param {string} id the job
   * @param {object} h handlers
   * @param {(name: string, data: object) => void} h.onEvent each output, phase and result, in order, once
   * @param {(s: {state: string, message?: string}) => void} h.onStatus connecting, live, reconnecting, done
   * @param {() => void} h.onGone the Hub does not know the job (any more)
   */
  constructor(id, h) {
    this.id = id;
    this.h = h;
    this.last = 0;
    this.gen = 0;
    this.abort = null;
    this.timer = 0;
    this.watchdog = 0;
    this.delay = MIN_BACKOFF;
    this.ended = false;
  }

  /** stop ends the current connection (and any pending retry). */
  stop(status) {
    this.gen++;
    clearTimeout(this.timer);
    clearTimeout(this.watchdog);
    if (this.abort) this.abort.abort();
    this.abort = null;
    if (status) this.h.onStatus(status);
  }

  /** close ends the stream for good (the page is left). */
  close() { this.ended = true; this.stop(null); }

  retry(message) {
    if (this.ended) return;
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, MAX_BACKOFF);
    this.stop({ state: 'reconnecting', message });
    const gen = this.gen;
    this.timer = setTimeout(() => { if (gen === this.gen) this.connect(); }, delay);
  }

  /** connect opens a connection now, from the last event seen. */
  async connect() {
    if (this.ended) return;
    this.stop({ state: this.last ? 'reconnecting' : 'connecting' });
    const gen = this.gen;
    const ctl = new AbortController();
    this.abort = ctl;
    const headers = { Accept: 'text/event-stream' };
    if (this.last > 0) headers['Last-Event-ID'] = String(this.last);
    let res;
    try {
      res = await fetch(clones.eventsPath(this.id), { credentials: 'same-origin', cache: 'no-store', signal: ctl.signal, headers });
    } catch {
      if (gen === this.gen) this.retry('The Hub did not answer.');
      return;
    }
    if (gen !== this.gen) return;
    if (res.status !== 200) {
      res.body?.cancel().catch(() => {});
      if (res.status === 401) { this.close(); sessionExpired(); return; }
      if (res.status === 404) { this.close(); this.h.onGone(); return; }
      this.retry(`The Hub answered ${res.status}.`);
      return;
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SSEParser((name, data, id) => { if (gen === this.gen) this.event(name, data, id); });
    const arm = () => {
      clearTimeout(this.watchdog);
      this.watchdog = setTimeout(() => { if (gen === this.gen) this.retry('The stream went silent.'); }, IDLE_MS);
    };
    arm();
    this.h.onStatus({ state: 'live' });
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (gen !== this.gen) return;
        if (done) break;
        arm();
        parser.push(decoder.decode(value, { stream: true }));
        if (this.ended) return;
      }
    } catch {
      // aborted or cut: below
    }
    if (gen === this.gen) this.retry('The connection to the Hub was lost.');
  }

  event(name, data, id) {
    const n = Number.parseInt(id, 10);
    if (!Number.isSafeInteger(n) || n <= this.last) return; // a replay of what was seen
    let body;
    try { body = JSON.parse(data); } catch { return; }
    this.last = n;
    this.delay = MIN_BACKOFF;
    this.h.onEvent(name, body);
    if (name === 'result') {
      this.close();
      this.h.onStatus({ state: 'done' });
    }
  }
}
