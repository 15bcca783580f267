package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium or Chrome binary: $WHARF_CHROMIUM
// when set, else the first of chromium, chromium-browser, google-chrome
// and google-chrome-stable on PATH.
func Chromium() (string, bool) {
	if p := os.Getenv("WHARF_CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// Browser is one headless Chromium with a fresh profile.
type Browser struct {
	ctx    context.Context // the allocator's: each page is a tab of it
	cancel func()
	dir    string
}

// NewBrowser starts Chromium at path. The flags keep it off the network
// (no background requests, which a closed network refuses) and let it run
// as root in a container (no sandbox).
func NewBrowser(ctx context.Context, path string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "wharf-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(dir),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,AutofillServerCommunication"),
		chromedp.Flag("lang", "en-US"),
	)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	// The first context starts the browser; it lives as long as bctx.
	bctx, bcancel := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		bcancel()
		acancel()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start chromium at %s: %w", path, err)
	}
	return &Browser{ctx: bctx, cancel: func() { bcancel(); acancel() }, dir: dir}, nil
}

// Close ends the browser and removes its profile.
func (b *Browser) Close() {
	b.cancel()
	os.RemoveAll(b.dir)
}

// Page is one tab, with the console errors and uncaught exceptions its
// documents raised. Tabs of one browser share its cookies; Isolated ones
// have their own.
type Page struct {
	Ctx    context.Context
	cancel func()
	mu     sync.Mutex
	errs   []string
	hooks  []func(ev any)
}

// OnEvent adds fn to the functions that see every DevTools event of the
// tab (network events, say, once the Network domain is enabled). fn runs
// on the tab's reading goroutine: it must return fast.
func (p *Page) OnEvent(fn func(ev any)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hooks = append(p.hooks, fn)
}

// NewPage opens a tab. With isolated, it gets a browser context of its
// own (no shared cookies: another device).
func (b *Browser) NewPage(isolated bool) (*Page, error) {
	p := &Page{}
	opts := []chromedp.ContextOption{chromedp.WithListener(p.listen)}
	if isolated {
		opts = append(opts, chromedp.WithNewBrowserContext())
	}
	ctx, cancel := chromedp.NewContext(b.ctx, opts...)
	p.Ctx, p.cancel = ctx, cancel
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, err
	}
	return p, nil
}

func (p *Page) listen(ev any) {
	p.mu.Lock()
	hooks := p.hooks
	p.mu.Unlock()
	for _, fn := range hooks {
		fn(ev)
	}
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		p.addErr(fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, msg))
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			var parts []string
			for _, a := range e.Args {
				s := a.Description
				if len(a.Value) > 0 {
					s = strings.Trim(string(a.Value), `"`)
				}
				parts = append(parts, s)
			}
			p.addErr("console.error: " + strings.Join(parts, " "))
		}
	}
}

func (p *Page) addErr(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = append(p.errs, s)
}

// Errors returns the console errors and exceptions seen so far.
func (p *Page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

// Close closes the tab.
func (p *Page) Close() { p.cancel() }

// opTimeout bounds every action on a page, so a step that can never
// finish (a navigation that another one replaced, say) fails the caller
// instead of hanging it.
const opTimeout = 30 * time.Second

// Do runs chromedp actions in the tab, for at most 30 s.
func (p *Page) Do(actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(p.Ctx, opTimeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Eval evaluates a JavaScript expression in the page (through DevTools,
// which the page's Content-Security-Policy does not restrict) and decodes
// its JSON value into T; a promise is awaited.
func Eval[T any](p *Page, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(p.Ctx, opTimeout)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// Wait waits until the JavaScript condition cond (an expression) is true,
// checking at every DOM change and every 50 ms, for at most timeout. It
// returns an error naming cond, with the page's text, when the time is up.
// (chromedp.Poll builds its predicate with new Function, which the
// dashboard's Content-Security-Policy forbids.)
func (p *Page) Wait(cond string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			left = time.Millisecond
		}
		ok, err := Eval[bool](p, fmt.Sprintf(waitJS, cond, left.Milliseconds()))
		if err != nil && navigated(err) && time.Now().Before(deadline) {
			// The document changed under the check: check the new one.
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", cond, err)
		}
		if !ok {
			text, _ := Eval[string](p, `document.body ? document.body.innerText : ''`)
			return fmt.Errorf("waited %v for %s; the page says:\n%s", timeout, cond, text)
		}
		return nil
	}
}

// waitJS resolves true once the condition %s holds, false after %d ms.
const waitJS = `new Promise((resolve) => {
  const test = () => { try { return !!(%s); } catch (e) { return false; } };
  if (test()) { resolve(true); return; }
  let done = false;
  const finish = (v) => { if (done) return; done = true; obs.disconnect(); clearInterval(iv); clearTimeout(to); resolve(v); };
  const obs = new MutationObserver(() => { if (test()) finish(true); });
  obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const iv = setInterval(() => { if (test()) finish(true); }, 50);
  const to = setTimeout(() => finish(false), %d);
})`

// navigated reports an evaluation cut short by a navigation.
func navigated(err error) bool {
	s := err.Error()
	return strings.Contains(s, "navigated or closed") || strings.Contains(s, "Cannot find context") ||
		strings.Contains(s, "Execution context was destroyed")
}

// JS quotes s as a JavaScript string literal.
func JS(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
