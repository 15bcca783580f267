// The attach WebSocket of one shell (GET /s/{ws}/api/shells/{id}/attach,
// see api/openapi.yaml), kept open across sleeps and network changes.
//
// The child numbers every output byte. The client keeps `offset`, the
// absolute offset of the next byte it expects, and asks for it when it
// reattaches: if the child still holds it, the answer's hello says the
// same offset and the screen stays as it is (nothing lost, nothing
// twice); otherwise hello says where the child's scrollback starts and
// the screen is reset before that replay is written. Acks follow the
// terminal's write callback, so the child's window (what it sends
// ahead of acks) measures what the screen has drawn, not what the socket
// buffered: a `yes` flood waits on the slowest part, the drawing.
//
// A connection that ends for any reason but a final one (the shell
// closed or exited, the caller leaving) is made again after a pause that
// doubles up to MAX_BACKOFF_MS; showing the page again, or the network
// coming back, tries at once, and a page that was hidden long enough for
// the socket to have silently died (a phone asleep) starts a fresh one.
// This module knows nothing of xterm: it writes bytes through callbacks,
// so the browser tests drive it with a fake socket.

export const MIN_BACKOFF_MS = 500;
export const MAX_BACKOFF_MS = 15000;
/** The largest PTY the child accepts (api/openapi.yaml, the shell size bounds). */
export const MAX_COLS = 1000;
export const MAX_ROWS = 500;
/** A page hidden longer than this reconnects when shown (its socket may be dead). */
export const STALE_AFTER_MS = 10000;

/** attachURL is the same-origin ws:// or wss:// URL of a shell's attach socket. */
export function attachURL(ws, shell, offset, loc = location) {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${loc.host}/s/${encodeURIComponent(ws)}/api/shells/${encodeURIComponent(shell)}/attach?offset=${offset}`;
}

/**
 * Attachment is one shell's attachment. The callbacks:
 *   write(bytes, done): draw output; call done() once drawn
 *   reset(): clear the screen (queued after what write was given)
 *   hello({readOnly, cols, rows}): a connection was (re)established
 *   resized(cols, rows): the PTY's size changed (another client)
 *   exited(code|null): the process ended
 *   status({state, retryIn?}): connecting | live | waiting | exited | closed | stopped
 *   check(): resolves 'ok' | 'gone' | 'stopped' when a connection fails,
 *     so a vanished shell or a stopped workspace is not retried forever
 * open(url) makes the socket (a test passes a fake); timers likewise.
 */
export class Attachment {
  constructor(ws, shell, cb, { open = (url) => new WebSocket(url), setTimer = setTimeout, clearTimer = clearTimeout, now = Date.now } = {}) {
    Object.assign(this, { ws, shell, cb, open });
    // Called as plain functions: the browser's timers refuse another `this`.
    this.setTimer = (fn, ms) => setTimer(fn, ms);
    this.clearTimer = (id) => clearTimer(id);
    this.now = () => now();
    this.offset = 0; // the absolute offset of the next output byte
    this.sock = null;
    this.attempts = 0; // failures since the last hello
    this.timer = 0;
    this.final = false; // no more connections: closed, exited or left
    this.readOnly = false;
    this.hiddenAt = 0;
  }

  /** connect opens a connection now (dropping a wait for one). */
  connect() {
    if (this.final) return;
    this.clearTimer(this.timer);
    this.timer = 0;
    this.drop();
    const conn = { asked: this.offset, hello: false };
    const sock = this.open(attachURL(this.ws, this.shell, conn.asked));
    sock.binaryType = 'arraybuffer';
    this.sock = sock;
    this.conn = conn;
    this.cb.status({ state: 'connecting' });
    sock.onmessage = (ev) => { if (this.sock === sock) this.message(sock, conn, ev.data); };
    sock.onclose = (ev) => { if (this.sock === sock) this.closed(ev.code, ev.reason, conn); };
    sock.onerror = () => { /* a close event follows */ };
  }

  message(sock, conn, data) {
    if (typeof data !== 'string') {
      if (!conn.hello) return;
      const bytes = new Uint8Array(data);
      const end = this.offset + bytes.length;
      this.offset = end;
      this.cb.write(bytes, () => this.ack(sock, end));
      return;
    }
    let msg;
    try { msg = JSON.parse(data); } catch { return; }
    switch (msg.type) {
      case 'hello':
        conn.hello = true;
        if (msg.offset !== conn.asked) this.cb.reset();
        this.offset = msg.offset;
        this.attempts = 0;
        this.readOnly = !!msg.readOnly;
        this.cb.hello({ readOnly: this.readOnly, cols: msg.cols, rows: msg.rows });
        this.cb.status({ state: 'live' });
        break;
      case 'resize':
        this.cb.resized(msg.cols, msg.rows);
        break;
      case 'skip':
        // An agent's terminal dropped output the screen never got.
        if (msg.offset > this.offset) this.offset = msg.offset;
        break;
      case 'exit':
        this.final = true;
        this.cb.exited(msg.exitCode ?? null);
        this.cb.status({ state: 'exited' });
        break;
    }
  }

  /** ack tells the child the screen drew everything before end, on the socket that sent it. */
  ack(sock, end) {
    if (this.sock === sock && sock.readyState === 1) sock.send(JSON.stringify({ type: 'ack', offset: end }));
  }

  /** input sends keys (ignored while not connected, or on a read-only shell). */
  input(data) {
    if (!data || this.readOnly || !this.live()) return;
    this.sock.send(JSON.stringify({ type: 'input', data }));
  }

  /**
   * resize asks for the PTY's size to follow the screen's, within the
   * child's bounds (beyond them it would close the socket).
   */
  resize(cols, rows) {
    if (this.readOnly || !this.live()) return;
    const clamp = (n, max) => Math.max(1, Math.min(max, Math.floor(n)));
    this.sock.send(JSON.stringify({ type: 'resize', cols: clamp(cols, MAX_COLS), rows: clamp(rows, MAX_ROWS) }));
  }

  live() { return !!(this.sock && this.conn?.hello && this.sock.readyState === 1); }

  async closed(code, reason, conn) {
    this.sock = null;
    if (this.final) return;
    if (code === 1000 && reason === 'shell closed') {
      this.final = true;
      this.cb.status({ state: 'closed' });
      return;
    }
    if (code === 1000 && reason === 'exited') {
      this.final = true;
      this.cb.exited(null);
      this.cb.status({ state: 'exited' });
      return;
    }
    // Anything else may pass: a restart of the Hub, a network change, a
    // socket a sleeping phone lost, a revoked session. check() asks the
    // HTTP API, whose 401 sends a revoked session to the login page.
    this.attempts++;
    const why = conn.hello ? 'ok' : await this.cb.check().catch(() => 'ok');
    if (this.final || this.sock) return;
    if (why === 'gone') {
      this.final = true;
      this.cb.status({ state: 'closed' });
      return;
    }
    if (why === 'stopped') {
      this.cb.status({ state: 'stopped' });
      return; // wake() tries again
    }
    this.retry();
  }

  retry() {
    const wait = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** Math.max(0, this.attempts - 1));
    this.cb.status({ state: 'waiting', retryIn: wait });
    this.clearTimer(this.timer);
    this.timer = this.setTimer(() => this.connect(), wait);
  }

  /**
   * visibility tells the page was hidden (true) or shown (false); shown
   * after a long sleep, the socket is replaced: it may be dead without
   * having said so, and resuming by offset costs nothing.
   */
  visibility(hidden) {
    if (hidden) {
      this.hiddenAt = this.now();
      return;
    }
    const slept = this.hiddenAt !== 0 && this.now() - this.hiddenAt > STALE_AFTER_MS;
    this.hiddenAt = 0;
    this.wake(slept);
  }

  /**
   * wake connects at once when no connection is open or being made (the
   * network came back, say), or always with force.
   */
  wake(force = false) {
    if (this.final || (this.sock && !force)) return;
    this.attempts = 0;
    this.connect();
  }

  /** drop closes the current socket without reconnecting it. */
  drop() {
    const s = this.sock;
    this.sock = null;
    if (s && s.readyState <= 1) s.close(1000, 'reattach');
  }

  /** close ends the attachment for good (the page left the shell). */
  close() {
    this.final = true;
    this.clearTimer(this.timer);
    this.drop();
  }
}
