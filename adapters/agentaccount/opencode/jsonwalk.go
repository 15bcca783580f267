package opencode

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The parsers of this package walk the server's answers token by token
// (encoding/json's Decoder.Token): the provider catalog is megabytes of
// model descriptions of which a handful of strings matter, and the store
// holds secrets that are read past and dropped at once, never kept.

// errShape is a parse failure: the answer is not the shape OpenCode sends.
var errShape = errors.New("unexpected JSON shape")

// walker reads a JSON value token by token: its memory is one token.
type walker struct {
	d    *json.Decoder
	next json.Token // a token read ahead by peek; nil when none
	has  bool
}

// newWalker reads r. A repeated name is no error (JavaScript keeps the
// last one); invalid UTF-8 is replaced, as JavaScript's decoder does.
func newWalker(r io.Reader) *walker {
	d := json.NewDecoder(r)
	d.UseNumber()
	return &walker{d: d}
}

// token reads the next token.
func (w *walker) token() (json.Token, error) {
	if w.has {
		w.has = false
		return w.next, nil
	}
	return w.d.Token()
}

// peek returns the next token without consuming it.
func (w *walker) peek() (json.Token, error) {
	if !w.has {
		tok, err := w.d.Token()
		if err != nil {
			return nil, err
		}
		w.next, w.has = tok, true
	}
	return w.next, nil
}

// skip reads past the next value, however deep, a token at a time.
func (w *walker) skip() error {
	depth := 0
	for {
		tok, err := w.token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// open reads the start of an object or array (delim); any other value is
// skipped and reported as errShape.
func (w *walker) open(delim json.Delim) error {
	tok, err := w.peek()
	if err != nil {
		return err
	}
	if tok != delim {
		if err := w.skip(); err != nil {
			return err
		}
		return errShape
	}
	_, err = w.token()
	return err
}

// eachMember reads an object, calling member for each name; member must
// consume the value (read it or skip it). A value that is not an object
// is skipped and reported as errShape.
func (w *walker) eachMember(member func(name string) error) error {
	if err := w.open('{'); err != nil {
		return err
	}
	for {
		tok, err := w.token()
		if err != nil {
			return err
		}
		if tok == json.Delim('}') {
			return nil
		}
		name, _ := tok.(string)
		if err := member(name); err != nil {
			return err
		}
	}
}

// eachElement reads an array, calling element for each value; element
// must consume it. A value that is not an array is skipped and reported
// as errShape.
func (w *walker) eachElement(element func() error) error {
	if err := w.open('['); err != nil {
		return err
	}
	for {
		tok, err := w.peek()
		if err != nil {
			return err
		}
		if tok == json.Delim(']') {
			_, err := w.token()
			return err
		}
		if err := element(); err != nil {
			return err
		}
	}
}

// readString reads a string value; any other value is skipped and ok is
// false.
func (w *walker) readString() (s string, ok bool, err error) {
	tok, err := w.peek()
	if err != nil {
		return "", false, err
	}
	if s, ok := tok.(string); ok {
		_, err := w.token()
		return s, true, err
	}
	return "", false, w.skip()
}

// readStrings reads an array's string elements, at most max of them;
// other elements, and any value that is not an array, are skipped.
func (w *walker) readStrings(max int) ([]string, error) {
	var out []string
	err := w.eachElement(func() error {
		s, ok, err := w.readString()
		if ok && len(out) < max {
			out = append(out, s)
		}
		return err
	})
	if errors.Is(err, errShape) {
		return nil, nil
	}
	return out, err
}

// end checks that nothing but white space follows the value.
func (w *walker) end() error {
	if w.has {
		return errShape
	}
	if _, err := w.d.Token(); !errors.Is(err, io.EOF) {
		return errShape
	}
	return nil
}

// skipShape turns errShape (a member of an unexpected type, skipped)
// into no error: the caller ignores that member.
func skipShape(err error) error {
	if errors.Is(err, errShape) {
		return nil
	}
	return err
}

// limitReader reads at most n bytes of r, then fails with errTooLarge:
// unlike io.LimitReader, a cut answer is not mistaken for a whole one.
type limitReader struct {
	r io.Reader
	n int64
}

// errTooLarge is an answer over its bound.
var errTooLarge = errors.New("answer too large")

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Bounds of the strings the status carries from the server.
const (
	maxID    = 256  // a provider id, a prompt key
	maxLabel = 512  // a name, a label, a prompt message
	maxText  = 2048 // instructions
)

// validID reports whether s can name a provider or a prompt: nonempty,
// bounded, printable, no spaces or slashes (it goes into a path).
func validID(s string) bool {
	if s == "" || len(s) > maxID || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == '/' || r == '\\' || r == 0x7f || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// validEnvName reports whether s is a plausible environment variable name.
func validEnvName(s string) bool {
	if s == "" || len(s) > maxID {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// clean makes text from the server fit to show: valid UTF-8, control
// characters (newlines too unless multiline) replaced by spaces, spaces
// collapsed at the ends, at most max bytes (cut at a rune boundary).
func clean(s string, max int, multiline bool) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && r == '\n') || r == '\u2028' || r == '\u2029' {
			r = ' '
		}
		if b.Len()+utf8.RuneLen(r) > max {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}
