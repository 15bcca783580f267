package web_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The conversation page's pure pieces, run in the browser: the reducer
// of the conversation topic (nothing applied twice, a replay ignored,
// what cannot apply taken again from a snapshot), the unified diff, and
// the Markdown renderer's links. The modules are the conversation
// page's chunk, found through the dynamic import that loads it.
func TestBrowserConversationUnits(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.Go(e.hub.URL+"login"))
	failures, err := browsertest.Eval[[]string](p, unitCases)
	is.NoErr(err) // the cases ran
	for _, f := range failures {
		t.Error(f)
	}
}

const unitCases = `(async () => {
  const src = async (href) => (await fetch(href)).text();
  const app = [...document.querySelectorAll('link[rel=modulepreload]')].map((l) => l.href).find((h) => /\/app\.[0-9a-f]{12}\.js$/.test(h));
  const page = new URL((await src(app)).match(/\/assets\/chat\/page\.[0-9a-f]{12}\.js/)[0], location.href).href;
  const pageSrc = await src(page);
  const mod = (name) => import(new URL(pageSrc.match(new RegExp('/assets/chat/' + name + '\\.[0-9a-f]{12}\\.js'))[0], location.href).href);
  const items = await mod('items');
  const itemsSrc = await src(new URL(pageSrc.match(/\/assets\/chat\/items\.[0-9a-f]{12}\.js/)[0], location.href).href);
  const dep = (name) => import(new URL(itemsSrc.match(new RegExp('/assets/chat/' + name + '\\.[0-9a-f]{12}\\.js'))[0], location.href).href);
  const { fromSnapshot, applyEvent } = await mod('convstate');
  const { diffLines, hunks } = await dep('diff');
  const { safeURL } = await dep('markdown');
  const fails = [];
  const expect = (name, got, want) => { if (JSON.stringify(got) !== JSON.stringify(want)) fails.push(name + ': got ' + JSON.stringify(got) + ', want ' + JSON.stringify(want)); };

  const conv = { id: 'a:1', title: '', status: 'idle', agent: { id: 'a', name: 'A' } };
  const s = fromSnapshot({ conversation: conv, configuration: {}, items: [{ id: 'u1', kind: 'user_message', text: 'hi' }], queued: [], cursor: 'c' });
  const ev = (seq, type, rest, gen = 'g1') => ({ generation: gen, sequence: seq, conversationId: 'a:1', type, ...rest });
  const text = () => s.order.map((id) => s.items.get(id).markdown ?? s.items.get(id).text).join('|');
  expect('a new item', applyEvent(s, ev(5, 'item.upsert', { item: { id: 'm1', kind: 'assistant_message', markdown: 'He' } })), 'applied');
  expect('a delta', applyEvent(s, ev(6, 'item.text_delta', { itemId: 'm1', delta: 'llo' })), 'applied');
  expect('the same delta again', applyEvent(s, ev(6, 'item.text_delta', { itemId: 'm1', delta: 'llo' })), 'ignored');
  expect('an older one', applyEvent(s, ev(3, 'item.text_delta', { itemId: 'm1', delta: '!' })), 'ignored');
  expect('after the replays', text(), 'hi|Hello');
  const before = s.items.get('m1');
  expect('an upsert of a known item', applyEvent(s, ev(7, 'item.upsert', { item: { id: 'u1', kind: 'user_message', text: 'hi there' } })), 'applied');
  expect('keeps its place', text(), 'hi there|Hello');
  expect('and the other item as it was', s.items.get('m1') === before, true);
  expect('a delta for an unknown item', applyEvent(s, ev(8, 'item.text_delta', { itemId: 'nope', delta: 'x' })), 'reload');
  expect('another generation', applyEvent(s, ev(9, 'item.remove', { itemId: 'u1' }, 'g2')), 'reload');
  expect('no stamps', applyEvent(s, { type: 'item.remove', itemId: 'u1' }), 'reload');
  expect('unchanged by what could not apply', [text(), s.sequence], ['hi there|Hello', 7]);
  expect('a status', applyEvent(s, ev(9, 'conversation.status', { status: 'failed', message: 'the agent exited' })), 'applied');
  expect('its message', [s.conversation.status, s.statusMessage], ['failed', 'the agent exited']);
  expect('the queue', applyEvent(s, ev(10, 'conversation.queue', { queued: [{ id: 'q1', text: 'later', queuedAt: 1 }], change: { kind: 'held', messageId: 'q1' } })), 'applied');
  expect('held', s.queued.map((q) => q.id), ['q1']);
  expect('an event of a type to come', applyEvent(s, ev(11, 'conversation.future', {})), 'ignored');
  expect('a removal', applyEvent(s, ev(12, 'item.remove', { itemId: 'u1' })), 'applied');
  expect('after the removal', text(), 'Hello');
  expect('an id that is an Object key', (items.requestId({ id: 'permission:toString', kind: 'permission' })), 'toString');

  const script = (a, b) => diffLines(a.split(' '), b.split(' ')).map((l) => l.op + l.text).join(',');
  expect('no change', script('a b c', 'a b c'), ' a, b, c');
  expect('a change in the middle', script('a b c', 'a x c'), ' a,-b,+x, c');
  expect('an insertion', script('a c', 'a b c'), ' a,+b, c');
  expect('from nothing', diffLines([], ['n']).map((l) => [l.op, l.a, l.b]), [['+', 0, 1]]);
  const long = Array.from({ length: 20 }, (_, i) => 'l' + i);
  const changed = long.map((l, i) => (i === 2 || i === 16 ? l + '!' : l));
  const hs = hunks(diffLines(long, changed));
  expect('two hunks, far apart', hs.map((h) => h.header), ['@@ -1,6 +1,6 @@', '@@ -14,7 +14,7 @@']);

  expect('a web address', safeURL('https://example.com/a'), 'https://example.com/a');
  expect('javascript:', safeURL('javascript:alert(1)'), '');
  expect('a data: address', safeURL('data:text/html,<b>'), '');
  expect('a relative path', safeURL('docs/readme.md'), '');
  return fails;
})()`
