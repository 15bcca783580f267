package web_test

import (
	"os"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
)

// notifyHub serves an in-process Hub with its state in a short folder.
func notifyHub(t *testing.T, opts ...browsertest.Option) *browsertest.InProcess {
	t.Helper()
	needBrowser(t)
	dir, err := os.MkdirTemp("", "wn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ip, err := browsertest.StartInProcess(t.Context(), dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ip.Close)
	return ip
}

// notifySection is the Settings section of push notifications.
const notifySection = `section.notify`

// notifySays holds when the Notifications section says text.
func notifySays(text string) string {
	return `(document.querySelector('section.notify') || {innerText: ''}).innerText.includes(` + browsertest.JS(text) + `)`
}

const iPhoneSafari = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Mobile/15E148 Safari/604.1"

// Settings says plainly why this device cannot receive push: an iPhone
// whose Safari tab runs the dashboard must add it to the Home Screen
// first (and, opened from there, is told nothing of the kind); a browser
// without Web Push says so. A browser that has it is told nothing.
func TestBrowserSettingsSaysWhyThisDeviceCannotReceivePush(t *testing.T) {
	ip := notifyHub(t)
	for _, tc := range []struct {
		name, ua, init string
		says           string // "" for no word on the device
	}{
		{name: "iPhone, in Safari", ua: iPhoneSafari, says: "push needs Wharf on the Home Screen"},
		{name: "iPhone, from the Home Screen", ua: iPhoneSafari,
			init: `Object.defineProperty(Navigator.prototype, 'standalone', {get: () => true, configurable: true})`},
		{name: "no Web Push", init: `delete window.PushManager`, says: "This browser cannot receive push notifications."},
		{name: "Chromium"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			p := openPage(t, browsertest.Phone)
			if tc.ua != "" {
				must(t, p.SetUserAgent(tc.ua, "iPhone"))
			}
			if tc.init != "" {
				must(t, p.AddInitScript(tc.init))
			}
			must(t, p.LogIn(ip.Hub))
			must(t, p.Go(ip.URL+"settings"))
			must(t, p.Wait(`document.querySelector('section.notify h2')`, wait))
			must(t, p.Wait(fitsIn(browsertest.Phone), wait))
			note := `document.querySelector('section.notify [data-note=device]')`
			if tc.says == "" {
				must(t, p.Wait(`!`+note, wait))
				return
			}
			must(t, p.Wait(note+` && `+notifySays(tc.says), wait))
			is.Equal(attr(t, p, `section.notify [data-note=device]`, "class"), "note note-warn") // a warning
		})
	}
}
