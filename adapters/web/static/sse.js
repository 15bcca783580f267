// An incremental Server-Sent Events parser (the WHATWG event-stream
// format): feed it decoded text as it arrives, and it calls onEvent for
// every dispatched event (with the stream's last event id, which the
// clone job channel writes and the live stream does not) and onComment
// for every comment line. The live
// stream is read with fetch rather than EventSource because EventSource
// hides the status of a refused stream (401 and 404 look alike), hides the
// keepalive comments an idle watchdog needs, and retries by itself with
// the cursors of the first request.

export class SSEParser {
  /**
   * @param {(name: string, data: string, id: string) => void} onEvent
   * @param {(text: string) => void} [onComment]
   */
  constructor(onEvent, onComment = () => {}) {
    this.onEvent = onEvent;
    this.onComment = onComment;
    this.buf = '';
    this.name = '';
    this.data = [];
    this.hasData = false;
    this.lastId = ''; // kept across events, as the format says
  }

  /** push takes the next chunk of text. */
  push(text) {
    this.buf += text;
    let start = 0;
    for (;;) {
      let i = start;
      while (i < this.buf.length && this.buf[i] !== '\n' && this.buf[i] !== '\r') i++;
      if (i >= this.buf.length) break;
      const line = this.buf.slice(start, i);
      // A CR LF pair is one line end; a lone CR at the very end of the
      // buffer may be the first half of one, so wait for more.
      if (this.buf[i] === '\r') {
        if (i + 1 >= this.buf.length) break;
        if (this.buf[i + 1] === '\n') i++;
      }
      start = i + 1;
      this.line(line);
    }
    this.buf = this.buf.slice(start);
  }

  line(line) {
    if (line === '') {
      if (this.hasData) this.onEvent(this.name || 'message', this.data.join('\n'), this.lastId);
      this.name = '';
      this.data = [];
      this.hasData = false;
      return;
    }
    if (line[0] === ':') {
      this.onComment(line.slice(1).trim());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'event') this.name = value;
    else if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    }
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    // retry is not used: each stream's owner decides when to reconnect.
  }
}
