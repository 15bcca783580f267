package web_test

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// pngFile writes a small real PNG image at path.
func pngFile(t *testing.T, path string) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range 4 {
		img.Set(i, i, color.RGBA{R: 47, G: 91, B: 211, A: 255})
	}
	var b bytes.Buffer
	must(t, png.Encode(&b, img))
	must(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// attach picks files with the composer's image picker.
func attach(t *testing.T, p *browsertest.Page, files ...string) {
	t.Helper()
	must(t, p.Do(chromedp.SetUploadFiles(`.composer input[type=file]`, files)))
}

const thumbs = `document.querySelectorAll('.composer .thumb').length`

// Images by the picker and by pasting reach the agent; an image too big
// or one too many is refused before it is sent, and one that is no
// image by its bytes is refused by the Hub: each in words beside the
// composer. An image named like HTML shows its name literally.
func TestBrowserConversationImages(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	p, cid := e.converse(t, browsertest.Desktop)
	dir := t.TempDir()
	evil := filepath.Join(dir, `<img src=x onerror=window.wharfPwned=1>.png`)
	pngFile(t, evil)

	attach(t, p, evil)
	must(t, p.Wait(thumbs+` === 1`, wait))
	is.Equal(p.Text(`.composer .thumb-name`), `<img src=x onerror=window.wharfPwned=1>.png`) // the name, literally
	// A pasted image (the clipboard of a screenshot tool).
	_, err := browsertest.Eval[bool](p, `(() => {
		const bytes = Uint8Array.from(atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], 'pasted.png', { type: 'image/png' }));
		document.querySelector('#composer-text').dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
		return true;
	})()`)
	is.NoErr(err) // pasted
	must(t, p.Wait(thumbs+` === 2`, wait))
	say(t, p, "echo two images")
	must(t, p.Wait(thumbs+` === 0 && `+status("Done"), wait))
	must(t, p.Wait(items("assistant_message")+`.some((li) => li.innerText.includes('echo two images') && li.innerText.split('image image/png').length === 3)`, wait)) // the agent got both
	is.Equal(p.Text(`.transcript li[data-kind=user_message] .att span`), `<img src=x onerror=window.wharfPwned=1>.png`)                                               // named literally in the message
	noImages, err := browsertest.Eval[bool](p, `document.querySelectorAll('.transcript img').length === 0 && !window.wharfPwned`)
	is.NoErr(err)
	is.True(noImages) // nothing the agent or a file name said became an element

	// Not an image, whatever its name says: the Hub reads the bytes.
	fake := filepath.Join(dir, "report.png")
	must(t, os.WriteFile(fake, []byte("%PDF-1.7 not an image"), 0o644))
	attach(t, p, fake)
	must(t, p.Wait(thumbs+` === 1`, wait))
	must(t, p.Type(`#composer-text`, "echo a report"))
	must(t, p.Click(`.composer button[type=submit]`))
	must(t, p.Wait(`document.querySelector('.composer [role=alert]') && document.querySelector('.composer [role=alert]').innerText.includes('is not a PNG, JPEG, GIF or WebP image')`, wait))
	must(t, p.ClickText(`.composer`, "Remove report.png"))
	must(t, p.Wait(thumbs+` === 0`, wait))

	// Too big, and one too many, are refused before uploading anything.
	big := filepath.Join(dir, "huge.png")
	must(t, os.WriteFile(big, make([]byte, 11<<20), 0o644))
	attach(t, p, big)
	must(t, p.Wait(`document.querySelector('.composer [role=alert]') && document.querySelector('.composer [role=alert]').innerText.includes('huge.png is 11.0 MB: an image may be at most 10 MiB')`, wait))
	var nine []string
	for i := range 9 {
		f := filepath.Join(dir, "shot-"+string(rune('a'+i))+".png")
		pngFile(t, f)
		nine = append(nine, f)
	}
	attach(t, p, nine...)
	must(t, p.Wait(thumbs+` === 8 && document.querySelector('.composer [role=alert]').innerText.includes('At most 8 images per message')`, wait))

	snap, err := e.api.Snapshot(e.ctx, e.ws, cid)
	is.NoErr(err)
	sent := 0
	for _, it := range snap.Items {
		if it["kind"] == "user_message" {
			sent++
		}
	}
	is.Equal(sent, 1) // only the first message went
}

// What the agent says is text: an answer holding HTML shows literally and
// runs nothing, Markdown shows as formatting built from text, and a
// link goes only to a web address.
func TestBrowserConversationRendersAgentTextAsText(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	p, cid := e.converse(t, browsertest.Desktop)
	const evil = `<img src=x onerror=window.wharfPwned=1>`
	answer := "echo " + evil + " **bold** `code` [bad](javascript:window.wharfPwned=1) [good](https://example.com/)\n\n- one\n- two"
	_, err := e.api.Send(e.ctx, e.ws, cid, answer) // lines, from another device (Enter would send the first)
	is.NoErr(err)
	must(t, p.Wait(status("Done"), wait))
	must(t, p.Wait(items("assistant_message")+`.some((li) => li.innerText.includes(`+browsertest.JS(evil)+`))`, wait)) // literally
	got, err := browsertest.Eval[map[string]any](p, `(() => {
		const md = document.querySelector('.transcript li[data-kind=assistant_message] .md');
		return { imgs: document.querySelectorAll('main img').length, pwned: !!window.wharfPwned,
			bold: md.querySelector('strong')?.innerText, code: md.querySelector('code')?.innerText,
			links: [...md.querySelectorAll('a')].map((a) => a.href), items: md.querySelectorAll('li').length };
	})()`)
	is.NoErr(err)
	is.Equal(got["imgs"], 0.0)                                                        // no element from the agent's HTML
	is.Equal(got["pwned"], false)                                                     // nothing ran
	is.Equal(got["bold"], "bold")                                                     // Markdown, as text in elements
	is.Equal(got["code"], "code")                                                     // inline code
	is.Equal(got["links"], []any{"https://example.com/"})                             // the javascript: link is text
	is.Equal(got["items"], 2.0)                                                       // a list
	is.True(strings.Contains(p.Text(`.transcript li[data-kind=user_message]`), evil)) // the message, literally

	// A title from another device that is HTML, literally.
	is.NoErr(e.api.Do(e.ctx, "POST", browsertest.ConversationPath(e.ws, cid, "/rename"), map[string]string{"title": evil}, nil))
	must(t, p.Wait(`document.querySelector('.conv-h1').innerText === `+browsertest.JS(evil), wait))
	must(t, p.Click(`a.back`))
	must(t, p.Wait(`document.querySelector('.conv-row .conv-title') && document.querySelector('.conv-row .conv-title').innerText === `+browsertest.JS(evil), wait))
	must(t, p.Wait(`document.querySelectorAll('main img').length === 0 && !window.wharfPwned`, wait))
}
