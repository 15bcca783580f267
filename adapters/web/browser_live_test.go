package web_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// The live stream survives the Hub going away: the header says
// "Reconnecting…", and once the Hub is back the page reconnects by itself
// with its cursors and follows saves again.
func TestBrowserReconnectsAfterHubRestart(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	dir := e.repo(t, "delta")
	id, err := e.api.Register(e.ctx, dir, "Delta", true)
	is.NoErr(err) // registered and started
	p := e.page(t, browsertest.Phone)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"w/"+id))
	must(t, p.Wait(`document.querySelector('.tree-file[data-path="README.md"]') && document.querySelector('.live-on')`, wait))

	e.hub.Stop()
	must(t, p.Wait(`document.querySelector('.live-off') && document.querySelector('.live-off').innerText.includes('Reconnecting')`, wait))
	must(t, p.Wait(`document.querySelector('.banner') && document.querySelector('.banner').innerText.includes('Trying again')`, wait)) // says when
	must(t, e.hub.Restart(e.ctx))
	// No need to wait out the backoff (unless a retry got there first).
	_, err = browsertest.Eval[bool](p, `(() => { const b = document.querySelector('.banner button'); if (b) b.click(); return true; })()`)
	is.NoErr(err) // clicked "Retry now", if it was still there
	must(t, p.Wait(`document.querySelector('.live-on') && !document.querySelector('.banner')`, 30e9))
	is.NoErr(os.WriteFile(filepath.Join(dir, "after.md"), []byte("back\n"), 0o644)) // saved after the restart
	must(t, p.Wait(`document.querySelector('.tree-file[data-path="after.md"]')`, 30e9))
	is.Equal(p.Text(`h1`), "Delta") // still on the page, still logged in
}

// The document reducer in the page follows the Hub's rules
// (hub/internal/docstate): patches apply only in order, within their epoch and
// context, whole or not at all; everything else asks for a snapshot.
func TestBrowserDocumentReducer(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.Go(e.hub.URL+"login"))
	failures, err := browsertest.Eval[[]string](p, reducerCases)
	is.NoErr(err) // the cases ran
	for _, f := range failures {
		t.Error(f)
	}
}

const reducerCases = `(async () => {
  const href = [...document.querySelectorAll('link[rel=modulepreload]')].map((l) => l.href)
    .find((h) => /\/docstate\.[0-9a-f]{12}\.js$/.test(h));
  const { newDocState, applyUpdate } = await import(href);
  const doc = (root, rel, rev) => {
    const d = { id: root + '/' + rel, name: rel.split('/').pop(), relativePath: rel, mtimeMs: 1, rootId: root, kind: 'text' };
    if (rev !== undefined) d.revision = rev;
    return d;
  };
  const root = (id, docs) => ({ id, label: id, path: id, hiddenCount: 0, docs });
  const snap = (epoch, revision, roots, extra = {}) => ({
    kind: 'snapshot', epoch, revision, discovery: { status: 'ready', discovered: 1 }, repositoryState: { generation: 1, status: 'ready' },
    workspaceApiRevision: 24, roots, repositories: [], compareTarget: 'base', initialFollow: false, defaultDocumentId: null,
    changedId: null, generatedAt: 1, build: {}, scope: { kind: 'folder' }, ...extra });
  const patch = (epoch, previousRevision, revision, upserts = [], removals = [], extra = {}) => ({
    kind: 'patch', epoch, previousRevision, revision, generatedAt: 2, scope: { kind: 'folder' }, compareTarget: 'base',
    unscopedFingerprint: 'f', upserts, removals, changedId: null, ...extra });
  const ids = (s) => s.roots.flatMap((r) => [...r.docs.keys()]).sort().join(',');
  const fails = [];
  const expect = (name, got, want) => { if (JSON.stringify(got) !== JSON.stringify(want)) fails.push(name + ': got ' + JSON.stringify(got) + ', want ' + JSON.stringify(want)); };

  let s = newDocState();
  expect('a patch onto nothing', applyUpdate(s, patch('e1', 0, 1)), 'resync');
  expect('a snapshot onto nothing', applyUpdate(s, snap('e1', 5, [root('/r', [doc('/r', 'a.md', 5)])])), 'applied');
  expect('its documents', ids(s), '/r/a.md');
  expect('the next patch', applyUpdate(s, patch('e1', 5, 8, [doc('/r', 'b.md', 8)])), 'applied');
  expect('after the patch', [ids(s), s.revision], ['/r/a.md,/r/b.md', 8]);
  expect('the same patch again', applyUpdate(s, patch('e1', 5, 8, [doc('/r', 'c.md', 8)])), 'ignored');
  expect('an old patch', applyUpdate(s, patch('e1', 2, 4)), 'ignored');
  expect('a gap', applyUpdate(s, patch('e1', 9, 10, [doc('/r', 'c.md', 10)])), 'resync');
  expect('unchanged by the gap', [ids(s), s.revision], ['/r/a.md,/r/b.md', 8]);
  expect('another epoch\'s patch', applyUpdate(s, patch('e2', 8, 9)), 'resync');
  expect('another context\'s patch', applyUpdate(s, patch('e1', 8, 9, [], [], { compareTarget: 'last-commit' })), 'resync');
  expect('an unknown root', applyUpdate(s, patch('e1', 8, 9, [doc('/x', 'a.md')])), 'resync');
  expect('removed and upserted at once', applyUpdate(s, patch('e1', 8, 9, [doc('/r', 'a.md', 9)], [{ rootId: '/r', id: '/r/a.md' }])), 'resync');
  expect('a file revision above the update', applyUpdate(s, patch('e1', 8, 9, [doc('/r', 'c.md', 10)])), 'resync');
  expect('a file revision going back', applyUpdate(s, patch('e1', 8, 9, [doc('/r', 'a.md', 4)])), 'resync');
  expect('a revision that is no integer', applyUpdate(s, patch('e1', 8, 9.5)), 'resync');
  expect('no epoch', applyUpdate(s, patch('', 8, 9)), 'resync');
  expect('a patch missing a field', applyUpdate(s, (() => { const u = patch('e1', 8, 9); delete u.upserts; return u; })()), 'resync');
  expect('unchanged by all of that', [ids(s), s.revision], ['/r/a.md,/r/b.md', 8]);
  expect('a removal', applyUpdate(s, patch('e1', 8, 11, [], [{ rootId: '/r', id: '/r/a.md' }], { changedId: '/r/b.md' })), 'applied');
  expect('after the removal', [ids(s), s.header.latestChange], ['/r/b.md', { id: '/r/b.md', revision: 11 }]);
  expect('a header field changes only when present', applyUpdate(s, patch('e1', 11, 12, [], [], { discovery: { status: 'indexing', discovered: 0 } })), 'applied');
  expect('discovery', s.header.discovery.status, 'indexing');
  applyUpdate(s, patch('e1', 12, 13));
  expect('discovery kept', s.header.discovery.status, 'indexing');
  expect('roots replaced', applyUpdate(s, patch('e1', 13, 14, [doc('/s', 'x.md', 14)], [], { roots: [{ id: '/s', label: 's', path: '/s', hiddenCount: 0 }] })), 'applied');
  expect('the dropped root\'s documents go', ids(s), '/s/x.md');
  expect('an older snapshot of the epoch', applyUpdate(s, snap('e1', 3, [])), 'ignored');
  expect('a snapshot of the epoch in another context', applyUpdate(s, snap('e1', 20, [], { compareTarget: 'last-commit' })), 'resync');
  expect('a new epoch restarts the revisions', applyUpdate(s, snap('e2', 1, [root('/r', [doc('/r', 'z.md')])])), 'applied');
  expect('after the new epoch', [ids(s), s.revision, s.epoch], ['/r/z.md', 1, 'e2']);
  expect('a snapshot whose document names another root', applyUpdate(s, snap('e3', 1, [root('/r', [doc('/q', 'z.md')])])), 'resync');
  expect('a snapshot with a root twice', applyUpdate(s, snap('e3', 1, [root('/r', []), root('/r', [])])), 'resync');
  expect('unchanged by bad snapshots', [ids(s), s.epoch], ['/r/z.md', 'e2']);
  return fails;
})()`
