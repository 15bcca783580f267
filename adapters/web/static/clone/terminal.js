// The clone job's output as a terminal shows it, bounded. The Hub's text
// holds "\n" for a line end and "\r" for "what follows replaces the
// current line" (git's progress), nothing else that moves the cursor;
// the screen keeps the latest MAX_LINES lines of at most MAX_COLUMNS
// characters each, so a job that prints for an hour costs the page no
// more than a screenful does.

export const MAX_LINES = 1000;
export const MAX_COLUMNS = 2000;

export class Screen {
  constructor() {
    this.lines = []; // finished lines, oldest first
    this.cur = ''; // the line being written
    this.dropped = 0; // finished lines no longer kept
  }

  /** write takes the text of one output event. */
  write(text) {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c !== '\n' && c !== '\r') continue;
      this.put(text.slice(start, i));
      start = i + 1;
      if (c === '\r') {
        this.cur = '';
        continue;
      }
      this.lines.push(this.cur);
      this.cur = '';
      if (this.lines.length > MAX_LINES) {
        const extra = this.lines.length - MAX_LINES;
        this.lines.splice(0, extra);
        this.dropped += extra;
      }
    }
    this.put(text.slice(start));
  }

  put(part) {
    if (part && this.cur.length < MAX_COLUMNS) this.cur = (this.cur + part).slice(0, MAX_COLUMNS);
  }

  /** text is the screen as one string, the current line last. */
  text() {
    return this.lines.length ? this.lines.join('\n') + '\n' + this.cur : this.cur;
  }

  /**
   * prompt is the line a question would be on: the current line, or the
   * last finished one while nothing follows it (a prompt may end in a
   * line end before its answer is read).
   */
  prompt() {
    return this.cur || (this.lines.length ? this.lines[this.lines.length - 1] : '');
  }
}

/**
 * secretPrompt reports whether a prompt asks for something to keep from
 * the screen: a password, a passphrase, or (as the earlier system did,
 * since a user name can be a token's name) a user name.
 */
export function secretPrompt(line) {
  return /password|passphrase|username for|token|one-time|verification code|PIN\b/i.test(line);
}
