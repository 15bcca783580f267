package browsertest

import (
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Keys focuses the element sel matches and types text into it with key
// events as a keyboard makes them: a keydown carrying the character, then
// a keyup. (chromedp.KeyEvent sends the character as a separate char
// event, which a keydown's preventDefault cannot suppress as it
// suppresses a real key's text; a terminal handles the keydown and would
// then get the character twice.)
func (p *Page) Keys(sel, text string) error {
	if _, err := Eval[bool](p, `(document.querySelector(`+JS(sel)+`).focus(), true)`); err != nil {
		return err
	}
	for _, r := range text {
		events := kb.Encode(r)
		var down *input.DispatchKeyEventParams
		for _, ev := range events {
			switch ev.Type {
			case kb.KeyDown:
				down = ev
			case kb.KeyChar:
				down.Text, down.UnmodifiedText = ev.Text, ev.UnmodifiedText
			}
		}
		for _, ev := range events {
			if ev.Type == kb.KeyChar {
				continue
			}
			if _, err := chromedp.Call(p.Ctx, input.DispatchKeyEvent, *ev); err != nil {
				return err
			}
		}
	}
	return nil
}
