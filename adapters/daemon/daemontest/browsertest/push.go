package browsertest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"
)

// Push notifications in the test browser. A headless Chromium has no
// push service it can reach offline, so the tests deliver push messages
// to the dashboard's service worker through DevTools
// (ServiceWorker.deliverPushMessage), exactly as a push service's message
// reaches it after the browser decrypted it.

// SetPermission grants (or denies) permission name, such as
// "notifications", to origin ("http://127.0.0.1:port") in the tab's
// browser context, as a person answering the browser's prompt would.
func (p *Page) SetPermission(origin, name string, granted bool) error {
	setting := browser.PermissionSettingDenied
	if granted {
		setting = browser.PermissionSettingGranted
	}
	ctx, cancel := context.WithTimeout(p.Ctx, opTimeout)
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: name}, Setting: setting, Origin: origin,
		BrowserContextID: chromedp.FromContext(p.Ctx).BrowserContextID,
	})
	return err
}

// AddInitScript runs the JavaScript src in every document the tab loads
// from now on, before the document's own scripts (through DevTools, which
// the dashboard's Content-Security-Policy does not restrict).
func (p *Page) AddInitScript(src string) error {
	ctx, cancel := context.WithTimeout(p.Ctx, opTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src})
	return err
}

// SetUserAgent makes the tab's documents report ua and platform (as
// navigator.userAgent and navigator.platform).
func (p *Page) SetUserAgent(ua, platform string) error {
	ctx, cancel := context.WithTimeout(p.Ctx, opTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua, Platform: platform})
	return err
}

// Workers follows the service workers of a tab's browser context, as
// DevTools reports them.
type Workers struct {
	p       *Page
	mu      sync.Mutex
	scopes  map[serviceworker.RegistrationID]string // live registrations' scopes
	active  map[serviceworker.RegistrationID]bool   // those with an activated version
	log     []string                                // what DevTools reported, for a failing test to show
	changed chan struct{}                           // closed and replaced at every report
}

// maxWorkerLog bounds what Workers keeps of DevTools' reports.
const maxWorkerLog = 200

// Log returns what DevTools reported of the workers: registrations,
// versions and errors, in order (the first 200 reports).
func (w *Workers) Log() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.log...)
}

func (w *Workers) note(format string, args ...any) {
	if len(w.log) < maxWorkerLog {
		w.log = append(w.log, fmt.Sprintf(format, args...))
	}
}

// WatchWorkers starts following the tab's service workers.
func (p *Page) WatchWorkers() (*Workers, error) {
	w := &Workers{p: p, scopes: map[serviceworker.RegistrationID]string{},
		active: map[serviceworker.RegistrationID]bool{}, changed: make(chan struct{})}
	p.OnEvent(w.event)
	ctx, cancel := context.WithTimeout(p.Ctx, opTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, serviceworker.Enable, cdp.Empty{}); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Workers) event(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *serviceworker.EventWorkerRegistrationUpdated:
		for _, r := range e.Registrations {
			w.note("registration %s at %s deleted=%v", r.RegistrationID, r.ScopeURL, r.IsDeleted)
			if r.IsDeleted {
				delete(w.scopes, r.RegistrationID)
			} else {
				w.scopes[r.RegistrationID] = r.ScopeURL
			}
		}
	case *serviceworker.EventWorkerVersionUpdated:
		for _, v := range e.Versions {
			w.note("version %s of %s: %s, %s", v.VersionID, v.RegistrationID, v.Status, v.RunningStatus)
			if v.Status == serviceworker.VersionStatusActivated {
				w.active[v.RegistrationID] = true
			}
		}
	case *serviceworker.EventWorkerErrorReported:
		if m := e.ErrorMessage; m != nil {
			w.note("error in %s at %s:%d: %s", m.RegistrationID, m.SourceURL, m.LineNumber, m.ErrorMessage)
		}
	default:
		return
	}
	close(w.changed)
	w.changed = make(chan struct{})
}

// Active waits, for at most timeout, until a registration whose scope is
// scope (a URL) has an activated worker, and returns its id.
func (w *Workers) Active(scope string, timeout time.Duration) (string, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		for id, s := range w.scopes {
			if s == scope && w.active[id] {
				w.mu.Unlock()
				return string(id), nil
			}
		}
		changed := w.changed
		w.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return "", fmt.Errorf("no active service worker at %s after %v", scope, timeout)
		case <-w.p.Ctx.Done():
			return "", w.p.Ctx.Err()
		}
	}
}

// DeliverPush hands data, as a push message's decrypted payload, to the
// worker of registration id at origin; it returns once the browser has
// taken it, before the worker has handled it.
func (w *Workers) DeliverPush(origin, id, data string) error {
	ctx, cancel := context.WithTimeout(w.p.Ctx, opTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, serviceworker.DeliverPushMessage, serviceworker.DeliverPushMessageParams{
		Origin: origin, RegistrationID: serviceworker.RegistrationID(id), Data: data})
	return err
}
