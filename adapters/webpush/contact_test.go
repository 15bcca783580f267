package webpush_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/webpush"
	"github.com/wharfhub/wharf/hub"
)

func TestTheContactIsOneThePushServicesTake(t *testing.T) {
	for _, c := range []struct {
		contact string
		refusal string // "" when taken
	}{
		{"", ""},
		{"mailto:ops@example.com", ""},
		{"mailto:first.last+wharf@mail.example.co.uk", ""},
		{"mailto:o'neil&co=1@xn--bcher-kva.example", ""},
		{"mailto:ops@my-host.ts.net", ""},
		{"https://example.com", ""},
		{"https://example.com/contact?via=wharf&x=1", ""},
		{"https://wharf.example.org:8443/", ""},
		{"https://192.0.2.10/contact", ""},

		{"ops@example.com", "mailto: address or an https: URL"},
		{"http://example.com", "mailto: address or an https: URL"},
		{"MAILTO:ops@example.com", "mailto: address or an https: URL"},
		{"mailto:", "one address"},
		{"mailto:ops", "one address"},
		{"mailto:@example.com", "one address"},
		{"mailto:ops@", "one address"},
		{"mailto:a@b@example.com", "one address"},
		{"mailto: <ops@example.com>", "plain ASCII without spaces"},
		{"mailto:<ops@example.com>", "cannot carry"},
		{"mailto:ops@example.com,dev@example.com", "one address"},
		{"mailto:ops,dev@example.com", "cannot carry"},
		{"mailto:ops@example.com?subject=hi", "not a valid domain"},
		{"mailto:ops%40x@example.com", "cannot carry"},
		{"mailto:.ops@example.com", "dot"},
		{"mailto:o..ps@example.com", "dot"},
		{"mailto:ops@localhost", "not a public domain name"},
		{"mailto:ops@LocalHost", "not a public domain name"},
		{"mailto:ops@wharf.localhost", "not a public domain name"},
		{"mailto:relay@herdr.local", "not a public domain name"},
		{"mailto:ops@wharf", "not a public domain name"},
		{"mailto:ops@127.0.0.1", "IP address"},
		{"mailto:ops@192.0.2.1", "IP address"},
		{"mailto:ops@[::1]", "IP address"},
		{"mailto:ops@[IPv6:2001:db8::1]", "IP address"},
		{"mailto:ops@10.0.0.256", "not a valid domain"},
		{"mailto:ops@-bad.example", "not a valid domain"},
		{"mailto:ops@a_b.example", "not a valid domain"},
		{"mailto:ops@example..com", "not a valid domain"},
		{"mailto:ops@example.com.", "not a valid domain"},
		{"mailto:ops@bücher.example", "plain ASCII"},
		{"https://localhost", "this machine"},
		{"https://localhost:4700/x", "this machine"},
		{"https://wharf.localhost/", "this machine"},
		{"https://127.0.0.1/", "this machine"},
		{"https://127.1.2.3:8443/", "this machine"},
		{"https://[::1]/", "this machine"},
		{"https://0.0.0.0/", "this machine"},
		{"https://user:pw@example.com/", "user name or password"},
		{"https://user@example.com/", "user name or password"},
		{"https:example.com", "with a host"},
		{"https://", "with a host"},
		{"https://exa mple.com", "plain ASCII without spaces"},
		{"mailto:ops@example.com\n", "plain ASCII without spaces"},
		{"mailto:" + strings.Repeat("a", 500) + "@example.com", "longer than 512"},
	} {
		t.Run(c.contact, func(t *testing.T) {
			is := is.New(t)
			err := webpush.CheckContact(c.contact)
			_, startErr := webpush.New(webpush.Options{KeyFile: filepath.Join(t.TempDir(), "k"), Contact: c.contact})
			if c.refusal == "" {
				is.NoErr(err)      // taken
				is.NoErr(startErr) // and a start takes it
				return
			}
			is.Equal(hub.KindOf(err), hub.Invalid)            // refused as invalid
			is.True(strings.Contains(err.Error(), c.refusal)) // saying why
			is.Equal(startErr, err)                           // and a start refuses it alike
		})
	}
}
