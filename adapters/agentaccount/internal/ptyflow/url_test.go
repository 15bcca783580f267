package ptyflow_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
)

func TestURLAfterReadsTheLinkPrintedAfterItsLead(t *testing.T) {
	const lead = "visit:"
	for _, c := range []struct {
		name, text string
		link       string
		done       bool
		err        error
	}{
		{"no lead yet", "Opening browser to sign in\u2026\r\n", "", false, nil},
		{"the lead, no link yet", "visit: ", "", false, nil},
		{"a link still arriving", "visit: https://claude.com/cai/oauth/authorize?code=tr", "", false, nil},
		{"a link ended by a line end", "visit: https://claude.com/a?state=s1\r\nPaste code here", "https://claude.com/a?state=s1", true, nil},
		{"a link on the next lines", "visit:\r\n\r\nhttps://accounts.google.com/o?x=1\r\n", "https://accounts.google.com/o?x=1", true, nil},
		{"a link ended by a space", "visit: https://a.example/x more", "https://a.example/x", true, nil},
		{"plain http", "visit: http://a.example/x\n", "", true, ptyflow.ErrNoURL},
		{"no host", "visit: https:///x\n", "", true, ptyflow.ErrNoURL},
		{"user info", "visit: https://u:p@a.example/x\n", "", true, ptyflow.ErrNoURL},
		{"not a URL", "visit: javascript:alert(1)\n", "", true, ptyflow.ErrNoURL},
		{"non-ASCII", "visit: https://a.example/\u00e9\n", "", true, ptyflow.ErrNoURL},
		{"too long", "visit: https://a.example/" + strings.Repeat("x", ptyflow.MaxURL) + "\n", "", true, ptyflow.ErrNoURL},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			link, done, err := ptyflow.URLAfter([]byte(c.text), lead)
			is.Equal(link, c.link)         // the link
			is.Equal(done, c.done)         // whether it is finished
			is.True(errors.Is(err, c.err)) // and usable
		})
	}
}

// FuzzURLAfter: a link URLAfter reports is a whole https address on a
// host, without user info, printed after the lead.
func FuzzURLAfter(f *testing.F) {
	f.Add([]byte("If the browser didn't open, visit: https://claude.com/cai/oauth/authorize?state=abc\r\n"), "visit:")
	f.Add([]byte("Please visit the following URL to authorize the application:\r\n\r\nhttps://accounts.google.com/o/oauth2/v2/auth?x=1\r\n"), "application:")
	f.Add([]byte("visit: https://a.example"), "visit:")
	f.Fuzz(func(t *testing.T, text []byte, lead string) {
		if lead == "" {
			return
		}
		link, done, err := ptyflow.URLAfter(text, lead)
		if err != nil || link == "" {
			if link != "" {
				t.Fatalf("a link %q with an error %v", link, err)
			}
			return
		}
		if !done {
			t.Fatalf("a link %q not done", link)
		}
		u, perr := url.Parse(link)
		if perr != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || len(link) > ptyflow.MaxURL {
			t.Fatalf("an unusable link %q", link)
		}
		if strings.ContainsAny(link, " \t\r\n") || !strings.Contains(string(text), lead) || !strings.Contains(string(text), link) {
			t.Fatalf("a link %q not printed after %q", link, lead)
		}
	})
}
