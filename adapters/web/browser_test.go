package web_test

// The dashboard in a real browser: a headless Chromium against a real
// `wharf serve` built from this checkout, with real git and workspace
// sessions. Without Chromium these tests skip, loudly; .ci/run installs
// it. They wait on DOM conditions with deadlines, never by sleeping.
//
// They run one after another, each against its own Hub, and the package's
// test binary must finish within go test's default 10 minutes (the
// README's command sets none). The longest of them, which share nothing
// but the browser (each page in a browser context of its own) and depend
// on no page having the focus, call t.Parallel: they run two at a time
// once the others are done.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// suite is what the browser tests share: the wharf binary and one
// Chromium (each test gets pages of its own, in their own browser
// contexts, and a Hub of its own).
var suite struct {
	once    sync.Once
	err     error
	skip    string
	tmp     string
	bin     string
	browser *browsertest.Browser
}

func TestMain(m *testing.M) {
	code := m.Run()
	if suite.browser != nil {
		suite.browser.Close()
	}
	if suite.tmp != "" {
		os.RemoveAll(suite.tmp)
	}
	os.Exit(code)
}

// env returns a fresh Hub (with HOME in a temp folder) and the shared
// browser, or skips the test when there is no Chromium.
type env struct {
	hub  *browsertest.Hub
	home string
	api  *browsertest.Client
	ctx  context.Context
}

const skipMessage = `
********************************************************************
*  BROWSER TESTS SKIPPED: no Chromium found (chromium on PATH, or  *
*  WHARF_CHROMIUM). .ci/run installs it: apt-get install chromium  *
********************************************************************`

// needBrowser starts the shared browser (building wharf on the way) the
// first time, and skips the test when there is no Chromium.
func needBrowser(t *testing.T) {
	t.Helper()
	suite.once.Do(func() {
		path, ok := browsertest.Chromium()
		if !ok {
			suite.skip = skipMessage
			fmt.Fprintln(os.Stderr, skipMessage)
			return
		}
		suite.tmp, suite.err = os.MkdirTemp("", "wharf-web-test-")
		if suite.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if suite.bin, suite.err = browsertest.Build(ctx, suite.tmp); suite.err != nil {
			return
		}
		suite.browser, suite.err = browsertest.NewBrowser(context.Background(), path)
	})
	if suite.skip != "" {
		t.Skip(suite.skip)
	}
	if suite.err != nil {
		t.Fatal(suite.err)
	}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvArgs(t, nil)
}

// newEnvArgs is newEnv with more arguments for `wharf serve`.
func newEnvArgs(t *testing.T, args []string) *env {
	t.Helper()
	return newEnvWith(t, args)
}

// newEnvWith is newEnvArgs with more variables in `wharf serve`'s
// environment (SHELL, say).
func newEnvWith(t *testing.T, args []string, environ ...string) *env {
	t.Helper()
	needBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	// A short directory: each running session's sockets live below the
	// state directory, and t.TempDir's path holds the test's name.
	dir, err := os.MkdirTemp("", "wb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	hub, err := browsertest.StartArgs(ctx, suite.bin, dir, args, append([]string{"HOME=" + home}, environ...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hub.Stop()
		if t.Failed() {
			t.Logf("wharf serve's log:\n%s", hub.Log())
		}
	})
	api, err := hub.Login(ctx, "curl")
	if err != nil {
		t.Fatal(err)
	}
	return &env{hub: hub, home: home, api: api, ctx: ctx}
}

// page opens a tab in a browser context of its own (its own cookies) at
// the given screen, failing the test on any console error or exception.
func (e *env) page(t *testing.T, screen browsertest.Screen) *browsertest.Page {
	t.Helper()
	return openPage(t, screen)
}

// openPage opens a tab of the shared browser in a browser context of its
// own, failing the test on any console error or exception it logs.
func openPage(t *testing.T, screen browsertest.Screen) *browsertest.Page {
	t.Helper()
	p, err := suite.browser.NewPage(true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, msg := range p.Errors() {
			if !expectedConsole(msg) {
				t.Errorf("the page logged: %s", msg)
			}
		}
		p.Close()
	})
	if err := p.Emulate(screen); err != nil {
		t.Fatal(err)
	}
	return p
}

// expectedConsole tells the console lines a test causes on purpose: the
// browser's own report of a refused request (a 401 after a revocation, a
// 429) is not the dashboard failing.
func expectedConsole(msg string) bool {
	return strings.Contains(msg, "Failed to load resource")
}

// repo makes a Git repository under the Hub's home.
func (e *env) repo(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(e.home, name)
	if err := browsertest.GitRepo(e.ctx, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// rowOf is a JavaScript expression for the list row of workspace id.
func rowOf(id string) string {
	return fmt.Sprintf(`document.querySelector('.ws-row[data-ws=%s]')`, browsertest.JS(id))
}

const wait = 15 * time.Second
