package web_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The Agents page's pure rules, run in the browser: which of a method's
// fields apply (every `when` condition holds on the answers of the
// fields that apply themselves), the answers sent (those fields only,
// none empty) and the first required one left empty; which addresses
// become links (http and https only: the agent's URL is untrusted);
// when the page reads the listing again (also after a login completed);
// which attempt a provider shows; and when a conversation can offer an
// agent's login in place.
// The module is the Agents page's chunk, found through the dynamic
// import that loads it.
func TestBrowserAgentsUnits(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.Go(e.hub.URL+"login"))
	failures, err := browsertest.Eval[[]string](p, agentsUnitCases)
	is.NoErr(err) // the cases ran
	for _, f := range failures {
		t.Error(f)
	}
}

const agentsUnitCases = `(async () => {
  const src = async (href) => (await fetch(href)).text();
  const abs = (from, re) => new URL(from.match(re)[0], location.href).href;
  const app = [...document.querySelectorAll('link[rel=modulepreload]')].map((l) => l.href).find((h) => /\/app\.[0-9a-f]{12}\.js$/.test(h));
  const pageSrc = await src(abs(await src(app), /\/assets\/agents\/page\.[0-9a-f]{12}\.js/));
  const { shownFields, effective, missing, linkOf, pollDelay, completedSince, attemptOf, loneLogin, FAST_MS } =
    await import(abs(pageSrc, /\/assets\/agents\/accounts\.[0-9a-f]{12}\.js/));
  const fails = [];
  const expect = (name, got, want) => { if (JSON.stringify(got) !== JSON.stringify(want)) fails.push(name + ': got ' + JSON.stringify(got) + ', want ' + JSON.stringify(want)); };

  const fields = [
    { key: 'deployment', kind: 'select', required: true, options: [{ value: 'cloud' }, { value: 'enterprise' }] },
    { key: 'url', kind: 'text', required: true, when: [{ key: 'deployment', op: 'eq', value: 'enterprise' }] },
    { key: 'proxy', kind: 'text', required: false, when: [{ key: 'url', op: 'neq', value: '' }] },
    { key: 'both', kind: 'text', required: false, when: [{ key: 'deployment', op: 'eq', value: 'enterprise' }, { key: 'proxy', op: 'eq', value: 'yes' }] },
  ];
  const keys = (answers) => shownFields(fields, answers).map((f) => f.key);
  expect('nothing answered', keys({}), ['deployment']);
  expect('cloud', keys({ deployment: 'cloud' }), ['deployment']);
  expect('enterprise', keys({ deployment: 'enterprise' }), ['deployment', 'url']);
  expect('with its url', keys({ deployment: 'enterprise', url: 'https://ghe' }), ['deployment', 'url', 'proxy']);
  expect('every condition holds', keys({ deployment: 'enterprise', url: 'https://ghe', proxy: 'yes' }), ['deployment', 'url', 'proxy', 'both']);
  expect('a hidden field answers nothing, down the chain', keys({ deployment: 'cloud', url: 'https://ghe', proxy: 'yes' }), ['deployment']);
  const answers = { deployment: 'cloud', url: 'https://ghe', proxy: 'yes' };
  expect('only the answers of fields shown', effective(shownFields(fields, answers), answers), { deployment: 'cloud' });
  expect('no empty answer', effective(fields, { deployment: '', url: 'x' }), { url: 'x' });
  expect('a required field left empty', missing(shownFields(fields, { deployment: 'enterprise' }), { deployment: 'enterprise', url: '  ' })?.key, 'url');
  expect('nothing missing', missing(shownFields(fields, { deployment: 'cloud' }), { deployment: 'cloud' }), null);
  expect('no fields', shownFields([], {}), []);

  expect('https', linkOf('https://auth.example/authorize?x=1'), 'https://auth.example/authorize?x=1');
  expect('http', linkOf('http://localhost:1455/start'), 'http://localhost:1455/start');
  for (const bad of ['javascript:alert(1)', 'data:text/html,<b>x</b>', 'file:///etc/passwd', 'vbscript:x', '/relative', '']) expect('no link: ' + bad, linkOf(bad), '');

  const agent = (state, extra = {}) => ({ agent: 'a', name: 'A', state, capabilities: { login: true, logout: true, activate: false }, targets: [], ...extra });
  const attempt = (id, state, completion, target = 't') => ({ id, agent: 'a', target, method: 'm', state, completion, startedAt: 0, expiresAt: 0 });
  const snap = (agents, attempts = []) => ({ agents, attempts });
  expect('nothing in motion', pollDelay(snap([agent('ready')]), 0, 0), 0);
  expect('an agent starting', pollDelay(snap([agent('ready'), agent('starting')]), 0, 0), FAST_MS);
  expect('an agent idle', pollDelay(snap([agent('idle')]), 0, 0), FAST_MS);
  expect('a device login waiting', pollDelay(snap([agent('ready')], [attempt('1', 'pending', 'device')]), 0, 0), FAST_MS);
  expect('a code login waiting', pollDelay(snap([agent('ready')], [attempt('1', 'pending', 'code')]), 0, 0) > FAST_MS, true);
  expect('just after a submission', pollDelay(snap([agent('ready')], [attempt('1', 'pending', 'code')]), 10, 20), FAST_MS);
  expect('settled logins', pollDelay(snap([agent('ready')], [attempt('1', 'complete', 'device')]), 0, 0), 0);
  expect('not read yet', pollDelay(null, 0, 0), 0);
  expect('just after a completed login', pollDelay(snap([agent('ready')], [attempt('1', 'complete', 'code')]), 10, 0, 20), FAST_MS);
  expect('a login completed', completedSince(snap([], [attempt('1', 'pending', 'code')]), snap([], [attempt('1', 'complete', 'code')])), true);
  expect('one that failed', completedSince(snap([], [attempt('1', 'pending', 'code')]), snap([], [attempt('1', 'failed', 'code')])), false);
  expect('one complete already', completedSince(snap([], [attempt('1', 'complete', 'code')]), snap([], [attempt('1', 'complete', 'code')])), false);
  expect('the first read', completedSince(null, snap([], [attempt('1', 'complete', 'code')])), false);

  const s = snap([], [attempt('1', 'cancelled', 'code'), attempt('2', 'pending', 'code'), attempt('3', 'pending', 'code', 'other')]);
  expect('the newest attempt of a target', attemptOf(s, 'a', 't').id, '2');
  expect('none', attemptOf(s, 'b', 't'), null);

  const target = (methods) => ({ id: 't', name: 'T', connected: false, credentials: [], methods });
  const oauth = { id: 'o', kind: 'oauth', label: 'Log in', fields: [] };
  const key = { id: 'k', kind: 'key', label: 'Key', fields: [] };
  expect('one provider, one browser login', loneLogin(agent('ready', { targets: [target([key, oauth])] }))?.method.id, 'o');
  expect('two browser logins', loneLogin(agent('ready', { targets: [target([oauth, { ...oauth, id: 'o2' }])] })), null);
  expect('two providers', loneLogin(agent('ready', { targets: [target([oauth]), { ...target([oauth]), id: 't2' }] })), null);
  expect('not from the Hub', loneLogin(agent('ready', { capabilities: { login: false }, targets: [target([oauth])] })), null);
  expect('not ready', loneLogin(agent('starting', { targets: [target([oauth])] })), null);
  return fails;
})()`
