package agentaccount

import (
	"crypto/sha256"
	"strings"
	"sync"
)

// Redacted replaces a submitted secret an agent echoed.
const Redacted = "[redacted]"

// Redactor replaces, in what an agent says, any secret submitted to it
// (of at least MinRedacted bytes) with Redacted. It keeps a digest and a
// length per secret, never the secret: it finds an echo by hashing each
// window of a message of that length. Messages are short (an agent's
// one-line answer), so the cost is bounded by MaxMessage × the number of
// lengths. Safe for concurrent use.
type Redactor struct {
	mu      sync.Mutex
	digests map[int]map[[32]byte]bool // by secret length
}

// MaxMessage bounds an agent's message the listing or an error carries:
// longer ones are cut (after redaction).
const MaxMessage = 1024

// Add registers secret. Shorter than MinRedacted or longer than
// MaxMessage (no message can echo it whole) is ignored.
func (r *Redactor) Add(secret string) {
	if len(secret) < MinRedacted || len(secret) > MaxMessage {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.digests == nil {
		r.digests = map[int]map[[32]byte]bool{}
	}
	if r.digests[len(secret)] == nil {
		r.digests[len(secret)] = map[[32]byte]bool{}
	}
	r.digests[len(secret)][sha256.Sum256([]byte(secret))] = true
}

// Redact returns msg with every registered secret replaced, cut to
// MaxMessage bytes.
func (r *Redactor) Redact(msg string) string {
	if len(msg) > 4*MaxMessage {
		msg = msg[:4*MaxMessage] // an agent's flood is cut before it is searched
	}
	r.mu.Lock()
	for n, set := range r.digests {
		msg = redactLength(msg, n, set)
	}
	r.mu.Unlock()
	if len(msg) > MaxMessage {
		msg = strings.ToValidUTF8(msg[:MaxMessage], "") + "…"
	}
	return msg
}

// redactLength replaces the windows of msg of length n whose digest is
// in set, left to right.
func redactLength(msg string, n int, set map[[32]byte]bool) string {
	var b strings.Builder
	last := 0
	for i := 0; i+n <= len(msg); {
		if set[sha256.Sum256([]byte(msg[i:i+n]))] {
			b.WriteString(msg[last:i])
			b.WriteString(Redacted)
			i += n
			last = i
			continue
		}
		i++
	}
	if last == 0 {
		return msg
	}
	b.WriteString(msg[last:])
	return b.String()
}
