package daemontest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"
)

// Secrets is one scenario's secret-exposure harness. It records every
// place a secret could leak to (the answers its Client receives, headers
// and bodies, live-stream frames included; every log written to a Log
// writer; every file of the state directory at each ScanStateDir) and
// Check fails for every registered secret found in a place it was not
// registered for. It is safe for concurrent use.
type Secrets struct {
	mu      sync.Mutex
	secrets []*secret
	places  []*place
	logs    map[string]*place
	answers int // answers recorded, to number them
	scans   int // ScanStateDir calls, to number them
}

// secret is one registered value and where it belongs.
type secret struct {
	name, value string
	allowed     []Place
}

// Place is where a secret legitimately is: the answer that issued it (a
// session id in the login answer and its cookie) or a file of the state
// directory meant to hand it over (the first user's password).
type Place struct {
	resp *http.Response
	file string
}

// InResponse allows a secret in resp, the answer that issued it: its
// headers and body. resp must come from the Secrets' own Client or
// Transport.
func InResponse(resp *http.Response) Place { return Place{resp: resp} }

// InFile allows a secret in the state directory's file at rel (a path
// relative to the directory, as ScanStateDir names it).
func InFile(rel string) Place { return Place{file: rel} }

// place is one recorded thing the check scans.
type place struct {
	what string         // how a report names it
	resp *http.Response // the answer it belongs to, for InResponse
	file string         // the state directory's file, for InFile
	mu   sync.Mutex     // guards data: a stream's body and a log grow
	data bytes.Buffer
}

// Write appends to the place: a log line, a body as it is read.
func (p *place) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.data.Write(b)
}

func (p *place) bytes() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Clone(p.data.Bytes())
}

// NewSecrets returns an empty harness.
func NewSecrets() *Secrets {
	return &Secrets{logs: map[string]*place{}}
}

// Register adds a secret the scenario learned (a password, a session id,
// a token) under a name the report uses, with the places it may be in;
// anywhere else it is a leak. An empty value is ignored.
func (s *Secrets) Register(name, value string, allowed ...Place) {
	if value == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = append(s.secrets, &secret{name: name, value: value, allowed: allowed})
}

// Log returns a writer whose bytes are scanned as the log called name:
// pass it as Options.Log (it stays the same across restarts) and as the
// output of any other command the scenario runs.
func (s *Secrets) Log(name string) io.Writer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.logs[name]; ok {
		return p
	}
	p := &place{what: "the log of " + name}
	s.logs[name] = p
	s.places = append(s.places, p)
	return p
}

// add records a place.
func (s *Secrets) add(p *place) *place {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.places = append(s.places, p)
	return p
}

// Leak is a registered secret found in a place it does not belong.
type Leak struct {
	Secret   string // the secret's name
	Where    string // the place, e.g. "the body of answer 7 (GET /api/hub/state, 200)"
	Encoding string // how it was written there: raw, json, url, base64, hex
}

// String describes the leak: the secret's name, the place, the encoding.
func (l Leak) String() string {
	return fmt.Sprintf("%s leaked to %s (%s)", l.Secret, l.Where, l.Encoding)
}

// Leaks returns every registered secret found outside its places.
func (s *Secrets) Leaks() []Leak {
	var leaks []Leak
	s.scan(func(sec *secret, p *place, enc string) {
		if !sec.allows(p) {
			leaks = append(leaks, Leak{Secret: sec.name, Where: p.what, Encoding: enc})
		}
	})
	return leaks
}

// Found returns every place the secret called name was found, allowed or
// not: a scenario proves with it that the scan sees what it should (the
// first user's password in its file, and only there).
func (s *Secrets) Found(name string) []string {
	var where []string
	s.scan(func(sec *secret, p *place, _ string) {
		if sec.name == name {
			where = append(where, p.what)
		}
	})
	return where
}

// Check fails tb once per leak, naming the secret, the place and the
// encoding, never the secret's value beyond a short prefix of a long one.
func (s *Secrets) Check(tb testing.TB) {
	tb.Helper()
	s.mu.Lock()
	values := map[string]string{}
	for _, sec := range s.secrets {
		values[sec.name] = sec.value
	}
	s.mu.Unlock()
	for _, l := range s.Leaks() {
		tb.Errorf("secret exposure: %s (%s) leaked to %s, %s-encoded", l.Secret, prefix(values[l.Secret]), l.Where, l.Encoding)
	}
}

// prefix shows at most the first four characters of a long secret, and
// nothing of a short one, so a report identifies it without exposing it.
func prefix(v string) string {
	if len(v) < 16 {
		return fmt.Sprintf("%d bytes", len(v))
	}
	return fmt.Sprintf("%d bytes, starting %q…", len(v), v[:4])
}

// scan calls found for every secret, place and encoding found there, once
// per secret and place (the first encoding that matches).
func (s *Secrets) scan(found func(*secret, *place, string)) {
	s.mu.Lock()
	secrets, places := append([]*secret(nil), s.secrets...), append([]*place(nil), s.places...)
	s.mu.Unlock()
	for _, p := range places {
		data := p.bytes()
		for _, sec := range secrets {
			for _, e := range encodings(sec.value) {
				if bytes.Contains(data, []byte(e.text)) {
					found(sec, p, e.name)
					break
				}
			}
		}
	}
}

// allows reports whether p is one of the secret's places.
func (sec *secret) allows(p *place) bool {
	for _, a := range sec.allowed {
		if a.resp != nil && a.resp == p.resp || a.file != "" && a.file == p.file {
			return true
		}
	}
	return false
}

// encoding is one way a value can be written down.
type encoding struct{ name, text string }

// encodings returns the forms a leak of v would take: raw, and escaped or
// encoded the ways a server or a log writes values (JSON strings, URL
// queries and paths, base64 as in Basic credentials, hex), each only once.
func encodings(v string) []encoding {
	j, _ := json.Marshal(v)
	all := []encoding{
		{"raw", v},
		{"json", string(j[1 : len(j)-1])},
		{"url", url.QueryEscape(v)},
		{"url-path", url.PathEscape(v)},
		{"base64", base64.StdEncoding.EncodeToString([]byte(v))},
		{"base64url", base64.RawURLEncoding.EncodeToString([]byte(v))},
		{"hex", hex.EncodeToString([]byte(v))},
	}
	// Inside a longer base64 text (Basic credentials encode "user:secret")
	// v's encoding depends on its offset modulo 3: for each offset, the
	// characters that hold only v's bits, without the groups it shares
	// with its neighbours.
	for k := range 3 {
		in := append(make([]byte, k), v...)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
			text := enc.EncodeToString(in)
			start := 0
			if k > 0 {
				start = 4 // the first group holds the neighbour's bits
			}
			// The last group may be padding, or shared with what follows.
			if end := len(text) - 4; end-start >= 8 {
				all = append(all, encoding{fmt.Sprintf("base64 at offset %d", k), text[start:end]})
			}
		}
	}
	var out []encoding
	seen := map[string]bool{}
	for _, e := range all {
		if !seen[e.text] {
			seen[e.text] = true
			out = append(out, e)
		}
	}
	return out
}
