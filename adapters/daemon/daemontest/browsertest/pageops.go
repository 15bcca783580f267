package browsertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Screen sizes the dashboard is checked and pictured at.
var (
	Desktop = Screen{Name: "desktop", Width: 1280, Height: 800, Scale: 1}
	Phone   = Screen{Name: "phone", Width: 390, Height: 844, Scale: 2, Mobile: true}
)

// Screen is a viewport to emulate.
type Screen struct {
	Name          string
	Width, Height int64
	Scale         float64
	Mobile        bool
}

// Emulate sets the tab's viewport (and touch, for a phone).
func (p *Page) Emulate(s Screen) error {
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(s.Scale)}
	if s.Mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	return p.Do(chromedp.EmulateViewport(s.Width, s.Height, opts...))
}

// ColorScheme emulates prefers-color-scheme: "light" or "dark".
func (p *Page) ColorScheme(scheme string) error {
	_, err := chromedp.Call(p.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	return err
}

// Go navigates to url (the Hub's URL plus path) and waits for the app to
// render something other than its loading line.
func (p *Page) Go(url string) error {
	if err := p.Do(chromedp.Navigate(url)); err != nil {
		return err
	}
	return p.Wait(`document.querySelector('#app') && !document.querySelector('#app > .boot')`, 10*time.Second)
}

// Screenshot writes the viewport as a PNG to path.
func (p *Page) Screenshot(path string) error {
	ctx, cancel := context.WithTimeout(p.Ctx, opTimeout)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// Type focuses the element sel matches, selects what it holds and types
// text over it with real key events (so the page sees the same input
// events as from a person).
func (p *Page) Type(sel, text string) error {
	if err := p.Do(chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Focus(chromedp.CSS(sel))); err != nil {
		return err
	}
	if _, err := Eval[bool](p, fmt.Sprintf(`(() => { const el = document.querySelector(%s); el.select(); return true; })()`, JS(sel))); err != nil {
		return err
	}
	if text == "" {
		return p.Do(chromedp.KeyEvent("\b"))
	}
	return p.Do(chromedp.SendKeys(chromedp.CSS(sel), text))
}

// Click clicks the first visible element sel matches, with the mouse.
func (p *Page) Click(sel string) error {
	return p.Do(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// ClickText clicks the first button or link whose visible text (or
// aria-label) is text, inside the element scope matches (a CSS selector,
// "" for the document).
func (p *Page) ClickText(scope, text string) error {
	if scope == "" {
		scope = "body"
	}
	expr := fmt.Sprintf(`(() => {
  const root = document.querySelector(%s);
  if (!root) return false;
  const want = %s;
  for (const el of root.querySelectorAll('button, a, summary, [role=radio]')) {
    const t = (el.getAttribute('aria-label') || el.innerText || '').trim();
    if (t === want && !el.disabled && el.offsetParent !== null) { el.setAttribute('data-click', '1'); return true; }
  }
  return false;
})()`, JS(scope), JS(text))
	if err := p.Wait(expr, 10*time.Second); err != nil {
		return err
	}
	err := p.Do(chromedp.Click(chromedp.CSS(`[data-click="1"]`)))
	// Unmark it without waiting for it: the click may have removed it.
	Eval[bool](p, `(document.querySelectorAll('[data-click]').forEach((el) => el.removeAttribute('data-click')), true)`)
	return err
}

// LogIn logs in through the login page, typing like a person.
func (p *Page) LogIn(h *Hub) error {
	if err := p.Go(h.URL + "login"); err != nil {
		return err
	}
	if err := p.Wait(`document.querySelector('input[name=username]')`, 10*time.Second); err != nil {
		return err
	}
	if err := p.Type(`input[name=username]`, h.User); err != nil {
		return err
	}
	if err := p.Type(`input[name=password]`, h.Password); err != nil {
		return err
	}
	if err := p.Do(chromedp.Click(chromedp.CSS(`button[type=submit]`))); err != nil {
		return err
	}
	return p.Wait(`location.pathname !== '/login' && document.querySelector('header.top')`, 15*time.Second)
}

// Text returns the visible text of the first element sel matches ("" if none).
func (p *Page) Text(sel string) string {
	s, _ := Eval[string](p, fmt.Sprintf(`(document.querySelector(%s) || {innerText: ''}).innerText`, JS(sel)))
	return strings.TrimSpace(s)
}
