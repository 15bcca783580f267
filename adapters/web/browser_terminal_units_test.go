package web_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The terminal's pieces, run in the browser under the dashboard's real
// Content-Security-Policy: xterm.js draws (cell size, theme, scrollbar
// rules, 24-bit colours) through the style shim with no policy violation,
// while a <style> element outside a terminal is still refused; and the
// attach client resumes, resets, acks, backs off and gives up as the
// protocol says, driven through a fake socket and fake timers. The
// modules are found through the links that load them.
func TestBrowserTerminalUnits(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.Go(e.hub.URL+"login"))
	failures, err := browsertest.Eval[[]string](p, terminalUnitCases)
	is.NoErr(err) // the cases ran
	for _, f := range failures {
		t.Error(f)
	}
}

// terminalModules is JavaScript that finds the terminal's modules: the
// section is preloaded; the screen is its dynamic import; xterm, the
// style shim and the attach client are the screen's imports.
const terminalModules = `
  const src = async (href) => (await fetch(href)).text();
  const abs = (from, re) => new URL(from.match(re)[0], location.href).href;
  const section = [...document.querySelectorAll('link[rel=modulepreload]')].map((l) => l.href).find((h) => /\/terminal\/section\.[0-9a-f]{12}\.js$/.test(h));
  const screenURL = abs(await src(section), /\/assets\/terminal\/screen\.[0-9a-f]{12}\.js/);
  const screenSrc = await src(screenURL);
  const { Terminal } = await import(abs(screenSrc, /\/assets\/vendor\/xterm\.[0-9a-f]{12}\.mjs/));
  const shim = await import(abs(screenSrc, /\/assets\/terminal\/cspstyle\.[0-9a-f]{12}\.js/));
  const { Attachment, attachURL, MIN_BACKOFF_MS, MAX_BACKOFF_MS, STALE_AFTER_MS, MAX_COLS, MAX_ROWS } = await import(abs(screenSrc, /\/assets\/terminal\/attach\.[0-9a-f]{12}\.js/));
  const { withCtrl } = await import(screenURL);
`

const terminalUnitCases = `(async () => {
  const fails = [];
  const expect = (name, got, want) => { if (JSON.stringify(got) !== JSON.stringify(want)) fails.push(name + ': got ' + JSON.stringify(got) + ', want ' + JSON.stringify(want)); };
  const violations = [];
  document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective + ' ' + (e.sample || '') + ' ' + e.sourceFile + ':' + e.lineNumber + ':' + e.columnNumber));
  ` + terminalModules + `

  // xterm under the policy.
  const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const before = document.adoptedStyleSheets.length;
  shim.installStyleShim();
  const host = document.createElement('div');
  host.style.width = '640px';
  host.style.height = '240px';
  document.body.append(host);
  const term = new Terminal({ theme: { background: '#102030', foreground: '#e0e0e0' } });
  term.open(host);
  expect('the cell colours are patched', shim.patchCellStyles(term), true);
  await new Promise((r) => term.write('\x1b[38;2;255;0;0mRED\x1b[0m \x1b[48;2;0;0;255mBLUE\x1b[0m \x1b[31mansi\x1b[0m', r));
  await frame();
  const span = (text) => [...host.querySelectorAll('.xterm-rows span')].find((s) => s.textContent === text);
  expect('a 24-bit foreground', span('RED') && getComputedStyle(span('RED')).color, 'rgb(255, 0, 0)');
  expect('a 24-bit background', span('BLUE') && getComputedStyle(span('BLUE')).backgroundColor, 'rgb(0, 0, 255)');
  expect('the cell rules apply', span('RED') && getComputedStyle(span('RED')).display, 'inline-block');
  expect('the theme applies', getComputedStyle(host.querySelector('.xterm-rows')).color, 'rgb(224, 224, 224)');
  expect('an ANSI colour from the theme rules', span('ansi') && getComputedStyle(span('ansi')).color !== getComputedStyle(host.querySelector('.xterm-rows')).color, true);
  expect('rows have their height', host.querySelector('.xterm-rows > div').getBoundingClientRect().height > 5, true);
  expect('no style element in the page', document.querySelectorAll('style').length, 0);
  expect('one adopted sheet per style element xterm made', [shim.heldStyles(), document.adoptedStyleSheets.length - before], [3, 3]);
  term.dispose();
  shim.releaseStyles(host);
  expect('disposing releases the sheets', [document.adoptedStyleSheets.length, shim.heldStyles()], [before, 0]);
  host.remove();
  // The shim is narrow: a style element elsewhere is refused as before.
  const refused = new Promise((r) => document.addEventListener('securitypolicyviolation', r, { once: true }));
  const other = document.createElement('style');
  other.textContent = 'body { background: red; }';
  document.head.appendChild(other);
  await refused; // events are queued in order: any xterm violation came first
  expect('only the style element outside a terminal is refused', violations.map((v) => v.split(' ')[0]), ['style-src-elem']);
  expect('and it does not apply', getComputedStyle(document.body).backgroundColor !== 'rgb(255, 0, 0)', true);
  other.remove();

  // The Ctrl key of the key bar.
  for (const [k, want] of [['c', '\x03'], ['C', '\x03'], ['d', '\x04'], ['[', '\x1b'], [' ', '\x00'], ['?', '\x7f'], ['1', '1'], ['\x1b[A', '\x1b[A']]) {
    expect('ctrl ' + JSON.stringify(k), withCtrl(k), want);
  }

  // The attach client, with a fake socket and fake timers.
  expect('the URL', attachURL('w 1', 's/1', 7, { protocol: 'https:', host: 'h:1' }), 'wss://h:1/s/w%201/api/shells/s%2F1/attach?offset=7');
  expect('the URL, plain http', attachURL('w', 's1', 0, { protocol: 'http:', host: 'h' }), 'ws://h/s/w/api/shells/s1/attach?offset=0');
  const socks = [], timers = [], log = [];
  let clock = 0, checkAnswer = 'ok';
  const open = (url) => {
    const s = { url, sent: [], readyState: 1, send(d) { this.sent.push(JSON.parse(d)); }, close(code, reason) { this.readyState = 3; this.closedWith = [code, reason]; } };
    socks.push(s);
    return s;
  };
  const pending = [];
  const a = new Attachment('w', 's1', {
    write: (bytes, done) => { log.push('write ' + new TextDecoder().decode(bytes)); pending.push(done); },
    reset: () => log.push('reset'),
    hello: (h) => log.push('hello ' + JSON.stringify(h)),
    resized: (c, r) => log.push('resized ' + c + 'x' + r),
    exited: (c) => log.push('exited ' + c),
    status: (s) => log.push('status ' + s.state + (s.retryIn ? ' ' + s.retryIn : '')),
    check: async () => checkAnswer,
  }, { open, setTimer: (fn, ms) => { timers.push({ fn, ms }); return timers.length; }, clearTimer: (id) => { if (id) timers[id - 1].fn = null; }, now: () => clock });
  const msg = (s, m) => s.onmessage({ data: typeof m === 'string' ? m : JSON.stringify(m) });
  const bin = (s, text) => s.onmessage({ data: new TextEncoder().encode(text).buffer });
  const settle = () => new Promise((r) => setTimeout(r, 0));

  a.connect();
  expect('asks from the start', socks[0].url.endsWith('?offset=0'), true);
  bin(socks[0], 'early');
  expect('nothing before hello', log.filter((l) => l.startsWith('write')), []);
  a.input('x');
  expect('no input before hello', socks[0].sent, []);
  msg(socks[0], { type: 'hello', offset: 0, readOnly: false, cols: 80, rows: 24 });
  expect('no reset when the offset is the one asked', log.includes('reset'), false);
  bin(socks[0], 'hello\r\n');
  expect('no ack before the screen drew it', socks[0].sent, []);
  pending.shift()();
  expect('acked after drawing', socks[0].sent, [{ type: 'ack', offset: 7 }]);
  a.input('ls\r');
  a.resize(100, 30);
  a.resize(5000, 900);
  expect('input and resize sent, within bounds', socks[0].sent.slice(1), [{ type: 'input', data: 'ls\r' }, { type: 'resize', cols: 100, rows: 30 },
    { type: 'resize', cols: MAX_COLS, rows: MAX_ROWS }]);
  msg(socks[0], { type: 'resize', cols: 90, rows: 20 });
  expect('another client resized', log.at(-1), 'resized 90x20');

  bin(socks[0], 'abc');
  socks[0].readyState = 3;
  socks[0].onclose({ code: 1006, reason: '' });
  await settle();
  expect('a lost connection waits', [timers.length, timers[0].ms, log.at(-1)], [1, MIN_BACKOFF_MS, 'status waiting ' + MIN_BACKOFF_MS]);
  pending.shift()();
  expect('no ack on a closed socket', socks[0].sent.length, 4);
  timers[0].fn();
  expect('resumes from the next byte', socks[1].url.endsWith('?offset=10'), true);
  msg(socks[1], { type: 'hello', offset: 10, readOnly: false, cols: 80, rows: 24 });
  expect('the screen is kept', log.filter((l) => l === 'reset').length, 0);

  socks[1].readyState = 3;
  socks[1].onclose({ code: 1001, reason: 'going away' });
  await settle();
  timers.at(-1).fn();
  msg(socks[2], { type: 'hello', offset: 4096, readOnly: false, cols: 80, rows: 24 });
  expect('reset when the child no longer holds the offset', log.filter((l) => l === 'reset').length, 1);
  bin(socks[2], 'xy');
  pending.shift()();
  expect('acks count from the new offset', socks[2].sent, [{ type: 'ack', offset: 4098 }]);

  // Failed attempts back off, doubling up to the maximum; a hello resets it.
  for (let i = 0; i < 8; i++) {
    const s = socks.at(-1);
    s.readyState = 3;
    s.onclose({ code: 1006, reason: '' });
    await settle();
    timers.at(-1).fn();
  }
  expect('the backoff is bounded', timers.slice(-3).map((t) => t.ms), [MAX_BACKOFF_MS, MAX_BACKOFF_MS, MAX_BACKOFF_MS]);

  // A phone asleep: the socket is replaced when the page shows again.
  msg(socks.at(-1), { type: 'hello', offset: 4098, readOnly: false, cols: 80, rows: 24 });
  const n = socks.length;
  a.visibility(true);
  clock += STALE_AFTER_MS / 2;
  a.visibility(false);
  expect('a short hide keeps the socket', socks.length, n);
  a.visibility(true);
  clock += STALE_AFTER_MS + 1;
  a.visibility(false);
  expect('a long sleep reconnects', [socks.length, socks[n - 1].closedWith?.[0], socks.at(-1).url.endsWith('?offset=4098')], [n + 1, 1000, true]);

  // A vanished shell is not retried; a closed or exited one neither.
  checkAnswer = 'gone';
  const t = timers.length;
  socks.at(-1).readyState = 3;
  socks.at(-1).onclose({ code: 1006, reason: '' });
  await settle();
  expect('gone: no retry', [timers.length, log.at(-1)], [t, 'status closed']);
  a.wake();
  expect('gone: waking does nothing', socks.length, n + 1);

  const ro = new Attachment('w', 'a1', { write: () => {}, reset: () => {}, hello: () => {}, resized: () => {}, exited: (c) => log.push('ro exited ' + c), status: (s) => log.push('ro ' + s.state), check: async () => 'ok' },
    { open, setTimer: () => 1, clearTimer: () => {} });
  ro.connect();
  const rs = socks.at(-1);
  msg(rs, { type: 'hello', offset: 0, readOnly: true, cols: 120, rows: 40 });
  ro.input('rm -rf /\r');
  ro.resize(10, 10);
  expect('read-only: no input, no resize', rs.sent, []);
  msg(rs, { type: 'skip', offset: 500 });
  msg(rs, { type: 'exit', exitCode: 3 });
  rs.onclose({ code: 1000, reason: 'exited' });
  expect('exit shown once, never retried', log.filter((l) => l.startsWith('ro ')).slice(-2), ['ro exited 3', 'ro exited']);
  expect('skip moves the offset', ro.offset, 500);

  // With the browser's own timers (called as plain functions).
  const own = new Attachment('w', 's9', { write: () => {}, reset: () => {}, hello: () => {}, resized: () => {}, exited: () => {}, status: (s) => log.push('own ' + s.state), check: async () => 'ok' }, { open });
  own.connect();
  msg(socks.at(-1), { type: 'hello', offset: 0, readOnly: false, cols: 80, rows: 24 });
  socks.at(-1).readyState = 3;
  socks.at(-1).onclose({ code: 1006, reason: '' });
  await settle();
  expect('the browser timers wait', log.at(-1), 'own waiting');
  own.close();
  return fails;
})()`
