package ptyflow

import (
	"bytes"
	"errors"
	"net/url"
)

// MaxURL bounds a login link read from a program's output.
const MaxURL = 8192

// ErrNoURL says the text after a lead is not a login link.
var ErrNoURL = errors.New("the program printed no usable login link")

// URLAfter reads the login link a program prints after lead, in text (a
// Cleaner's output): the first run of non-blank characters after lead's
// first occurrence and any blanks (spaces, tabs, line ends), which must
// be followed by a blank, the sign that the link was printed whole.
// done is false while that may still come. A finished run that is not
// an absolute https address on a host, without user info, of printable
// ASCII and at most MaxURL bytes, is ErrNoURL.
func URLAfter(text []byte, lead string) (link string, done bool, err error) {
	i := bytes.Index(text, []byte(lead))
	if i < 0 {
		return "", false, nil
	}
	rest := text[i+len(lead):]
	start := 0
	for start < len(rest) && blank(rest[start]) {
		start++
	}
	end := start
	for end < len(rest) && !blank(rest[end]) {
		end++
		if end-start > MaxURL {
			return "", true, ErrNoURL
		}
	}
	if end == len(rest) {
		return "", false, nil // the link, or its end, has not come yet
	}
	link = string(rest[start:end])
	for i := 0; i < len(link); i++ {
		if link[i] < 0x21 || link[i] > 0x7e {
			return "", true, ErrNoURL
		}
	}
	u, perr := url.Parse(link)
	if perr != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return "", true, ErrNoURL
	}
	return link, true, nil
}

// blank is a byte that ends a link: a space, a tab or a line end.
func blank(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }
