package web_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
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

// fakePush is an init script that stands in for the browser's push
// service: headless Chromium's real PushManager.subscribe needs a push
// service (FCM) that a closed network cannot reach. Its subscriptions have
// an endpoint on a push service host the Hub allows and real keys (a
// P-256 point and 16 random bytes, made by the test), and live in
// localStorage (test.push), so a reload sees the same one, and the test
// can drop it as a browser would. test.subscribed counts subscribe calls.
func fakePush(t *testing.T, host string) string {
	t.Helper()
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	must(t, err)
	auth := make([]byte, 16)
	_, err = rand.Read(auth)
	must(t, err)
	b64 := base64.RawURLEncoding.EncodeToString
	return `(() => {
  const keys = {p256dh: ` + browsertest.JS(b64(priv.PublicKey().Bytes())) + `, auth: ` + browsertest.JS(b64(auth)) + `};
  const load = () => JSON.parse(localStorage.getItem('test.push') || 'null');
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
  const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const wrap = (v) => v && {
    endpoint: v.endpoint, expirationTime: null,
    options: {userVisibleOnly: true, applicationServerKey: bytes(v.key).buffer},
    toJSON: () => ({endpoint: v.endpoint, expirationTime: null, keys}),
    unsubscribe: () => { localStorage.setItem('test.push', 'null'); return Promise.resolve(true); },
  };
  PushManager.prototype.getSubscription = function () { return Promise.resolve(wrap(load())); };
  PushManager.prototype.subscribe = function (opts) {
    if (!opts || opts.userVisibleOnly !== true) return Promise.reject(new DOMException('userVisibleOnly', 'NotAllowedError'));
    const n = Number(localStorage.getItem('test.subscribed') || '0') + 1;
    localStorage.setItem('test.subscribed', String(n));
    const v = {endpoint: 'https://` + host + `/fcm/send/test-' + n + '-' + Math.random().toString(36).slice(2), key: b64(opts.applicationServerKey)};
    localStorage.setItem('test.push', JSON.stringify(v));
    return Promise.resolve(wrap(v));
  };
})()`
}
