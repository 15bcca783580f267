package web_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The Clone pages' pure pieces, run in the browser: the terminal screen
// (a carriage return replaces the line, as git's progress needs; lines
// and columns bounded), the prompts taken for secrets, and the URL rules
// that mirror the Hub's (the derived folder name, the transport and host
// that decide which credentials are offered). The modules are the clone
// pages' chunk, found through the dynamic import that loads it.
func TestBrowserCloneUnits(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.Go(e.hub.URL+"login"))
	failures, err := browsertest.Eval[[]string](p, cloneUnitCases)
	is.NoErr(err) // the cases ran
	for _, f := range failures {
		t.Error(f)
	}
}

const cloneUnitCases = `(async () => {
  const src = async (href) => (await fetch(href)).text();
  const abs = (from, re) => new URL(from.match(re)[0], location.href).href;
  const app = [...document.querySelectorAll('link[rel=modulepreload]')].map((l) => l.href).find((h) => /\/app\.[0-9a-f]{12}\.js$/.test(h));
  const pageSrc = await src(abs(await src(app), /\/assets\/clone\/page\.[0-9a-f]{12}\.js/));
  const jobSrc = await src(abs(pageSrc, /\/assets\/clone\/job\.[0-9a-f]{12}\.js/));
  const { deriveFolderName, sourceOf, fits, canSign } = await import(abs(pageSrc, /\/assets\/clone\/rules\.[0-9a-f]{12}\.js/));
  const { Screen, secretPrompt, MAX_LINES, MAX_COLUMNS } = await import(abs(jobSrc, /\/assets\/clone\/terminal\.[0-9a-f]{12}\.js/));
  const fails = [];
  const expect = (name, got, want) => { if (JSON.stringify(got) !== JSON.stringify(want)) fails.push(name + ': got ' + JSON.stringify(got) + ', want ' + JSON.stringify(want)); };

  const s = new Screen();
  s.write("Cloning into 'x'...\n");
  s.write('Receiving objects:  42%');
  s.write('\rReceiving objects: 100%');
  expect('progress drawn in place', s.text(), "Cloning into 'x'...\nReceiving objects: 100%");
  s.write(', done.\nResolving');
  s.write('\r');
  s.write('Resolved\n');
  expect('a replacement split across events', s.text(), "Cloning into 'x'...\nReceiving objects: 100%, done.\nResolved\n");
  s.write("Username for 'http://h': ");
  expect('the prompt is the current line', s.prompt(), "Username for 'http://h': ");
  const many = new Screen();
  for (let i = 0; i < MAX_LINES + 10; i++) many.write('line ' + i + '\n');
  expect('lines bounded', [many.lines.length, many.dropped, many.lines[0]], [MAX_LINES, 10, 'line 10']);
  many.write('x'.repeat(MAX_COLUMNS + 50));
  expect('columns bounded', many.cur.length, MAX_COLUMNS);

  for (const [line, secret] of [["Password for 'https://ann@h': ", true], ["Enter passphrase for key '/k': ", true],
    ["Username for 'https://h': ", true], ['Are you sure you want to continue connecting (yes/no/[fingerprint])? ', false], ['Receiving objects', false]]) {
    expect('secret: ' + line, secretPrompt(line), secret);
  }

  for (const [url, name] of [['git@github.com:me/uatu.git', 'uatu'], ['https://github.com/me/uatu.git/', 'uatu'], ['/local/path/repo', 'repo'],
    ['file:///srv/git/p.git', 'p'], ['https://h/..', ''], ['https://h/.hidden', ''], ['///', '']]) {
    expect('folder of ' + url, deriveFolderName(url), name);
  }
  for (const [url, want] of [['https://GitHub.com/me/p.git', { transport: 'https', host: 'github.com' }],
    ['https://git.example.com:8443/p', { transport: 'https', host: 'git.example.com:8443' }],
    ['git@github.com:me/p.git', { transport: 'ssh', host: 'github.com' }], ['ssh://git@h.example:2222/p', { transport: 'ssh', host: 'h.example:2222' }],
    ['git+ssh://h/p', { transport: 'ssh', host: 'h' }], ['http://127.0.0.1:8080/p.git', { transport: 'other', host: '' }],
    ['file:///p', { transport: 'other', host: '' }], ['/srv/p', { transport: 'other', host: '' }], ['./rel:x', { transport: 'other', host: '' }]]) {
    expect('source of ' + url, sourceOf(url), want);
  }
  const token = { id: 't', type: 'token', enabled: true, capabilities: ['https-git'], metadata: { host: 'github.com' } };
  const cli = { ...token, capabilities: ['github-cli'] };
  const key = { id: 'k', type: 'ssh', enabled: true, capabilities: ['ssh-authentication'], metadata: {} };
  const signer = { ...key, id: 's', capabilities: ['ssh-signing'] };
  const gh = sourceOf('https://github.com/me/p.git');
  const ssh = sourceOf('git@github.com:me/p.git');
  expect('a token for the host', fits(token, gh), true);
  expect('a token for another host', fits(token, sourceOf('https://gitlab.com/me/p.git')), false);
  expect('a token without https-git', fits(cli, gh), false);
  expect('a disabled token', fits({ ...token, enabled: false }, gh), false);
  expect('a token over SSH', fits(token, ssh), false);
  expect('a login key over SSH', fits(key, ssh), true);
  expect('a signing-only key over SSH', fits(signer, ssh), false);
  expect('a key over HTTPS', fits(key, gh), false);
  expect('nothing for a local path', fits(key, sourceOf('/srv/p')), false);
  expect('signers', [token, key, signer, { id: 'g', type: 'openpgp', enabled: true, capabilities: ['openpgp-signing'] }].filter(canSign).map((c) => c.id), ['s', 'g']);
  return fails;
})()`
