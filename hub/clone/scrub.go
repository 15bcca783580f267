package clone

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// The scrubber's bounds.
const (
	// MinScrubBytes is the shortest input scrubbed from output: an answer
	// such as "y", "no" or "yes" is no secret, and scrubbing it would cut
	// those letters out of every later word of Git's output.
	MinScrubBytes = 4
	// MaxScrubInputs is how many inputs (the most recent) a job scrubs.
	// A clone asks a handful of questions (a host key, a user name, a
	// password, a one-time code, a retry or two); every output byte is
	// matched against each input, so the count bounds the cost per byte,
	// and an input drops out only after 16 later ones.
	MaxScrubInputs = 16
)

// Scrubber removes a job's inputs (passwords, passphrases, codes) from
// its output: a program that echoes what it reads, or prints it again
// ("authentication failed for 'hunter22'"), must not put a secret into
// the events every device of the owner replays.
//
// Each line of an input (Add) of at least MinScrubBytes is a secret.
// Every byte of the output that belongs to an occurrence of a secret is
// removed, wherever the chunks split: the scrubber holds back the
// output's tail while it may be the start of a secret (at most the
// longest secret less one byte, plus an incomplete UTF-8 sequence), and
// drops what it holds at Flush (a secret's start at the very end is
// still part of a secret). Removing an occurrence joins the text around
// it; should the join spell a secret again, the character completing it
// (or holding its last byte) is dropped too, so no secret ever appears in the text. Memory is
// bounded by MaxScrubInputs inputs of at most MaxInputBytes.
type Scrubber struct {
	secrets []secret
	held    []byte // undecided output
	// heldCovered marks the held bytes already known to be part of a
	// secret (a held secret's end may also start another).
	heldCovered []bool
	tail        []byte // the last maxLen-1 bytes written out
	// fresh counts the bytes written since text was removed (or a
	// secret added): only there can a join spell a secret.
	fresh int
}

type secret struct {
	s    string
	fail []int32 // KMP: fail[i] is the longest proper border of s[:i+1]
}

// Add makes each line of input of at least MinScrubBytes a secret (an
// input holding line breaks is several answers), keeping the
// MaxScrubInputs most recent.
func (sc *Scrubber) Add(input string) {
	for _, line := range strings.FieldsFunc(input, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if len(line) < MinScrubBytes {
			continue
		}
		for i, old := range sc.secrets {
			if old.s == line {
				sc.secrets = append(sc.secrets[:i], sc.secrets[i+1:]...)
				break
			}
		}
		if len(sc.secrets) == MaxScrubInputs {
			sc.secrets = append(sc.secrets[:0], sc.secrets[1:]...)
		}
		sc.secrets = append(sc.secrets, secret{s: line, fail: borders(line)})
		sc.fresh = 0
	}
}

// Write appends the scrubbed text of the next chunk p to dst and returns
// it; a tail that may be a secret's start waits for the next chunk.
func (sc *Scrubber) Write(dst, p []byte) []byte {
	if len(sc.secrets) == 0 && len(sc.held) == 0 {
		return append(dst, p...)
	}
	buf := append(sc.held, p...)
	hold := len(buf)
	var covered []bool
	if slices.Contains(sc.heldCovered, true) {
		covered = append(make([]bool, 0, len(buf)), sc.heldCovered...)
		covered = covered[:len(buf)]
	}
	for _, s := range sc.secrets {
		q := int32(0)
		for i, c := range buf {
			for q > 0 && s.s[q] != c {
				q = s.fail[q-1]
			}
			if s.s[q] == c {
				q++
			}
			if int(q) == len(s.s) {
				if covered == nil {
					covered = make([]bool, len(buf))
				}
				for j := i + 1 - len(s.s); j <= i; j++ {
					covered[j] = true
				}
				q = s.fail[q-1]
			}
		}
		hold = min(hold, len(buf)-int(q))
	}
	for k := len(buf) - 1; k >= 0 && k >= len(buf)-utf8.UTFMax+1; k-- {
		if utf8.RuneStart(buf[k]) {
			if !utf8.FullRune(buf[k:]) {
				hold = min(hold, k)
			}
			break
		}
	}
	i := 0
	for i < hold {
		_, size := utf8.DecodeRune(buf[i:])
		if i+size > hold {
			break
		}
		if covered != nil && slices.Contains(covered[i:i+size], true) {
			sc.fresh = 0
		} else {
			dst = sc.emit(dst, buf[i:i+size])
		}
		i += size
	}
	sc.held = append(sc.held[:0:0], buf[i:]...)
	sc.heldCovered = sc.heldCovered[:0]
	if covered != nil {
		sc.heldCovered = append(sc.heldCovered, covered[i:]...)
	}
	return dst
}

// emit writes out one character, unless it would complete a secret.
func (sc *Scrubber) emit(dst, r []byte) []byte {
	longest := 0
	for _, s := range sc.secrets {
		longest = max(longest, len(s.s))
	}
	if sc.fresh < longest {
		// The written text holds no secret, so any occurrence in the
		// join takes bytes of r: not only at its end, as a secret may
		// end inside a character (its last byte a character's first).
		joined := append(sc.tail[:len(sc.tail):len(sc.tail)], r...)
		for _, s := range sc.secrets {
			if bytes.Contains(joined, []byte(s.s)) {
				sc.fresh = 0
				return dst
			}
		}
		sc.fresh += len(r)
	}
	sc.tail = append(sc.tail, r...)
	if keep := longest - 1; len(sc.tail) > keep {
		sc.tail = append(sc.tail[:0], sc.tail[len(sc.tail)-keep:]...)
	}
	return append(dst, r...)
}

// Flush ends the stream: what is held (the start of a secret, or an
// incomplete character) is dropped.
func (sc *Scrubber) Flush(dst []byte) []byte {
	sc.held, sc.heldCovered = sc.held[:0], sc.heldCovered[:0]
	return dst
}

// borders is KMP's failure function of s.
func borders(s string) []int32 {
	f := make([]int32, len(s))
	k := int32(0)
	for i := 1; i < len(s); i++ {
		for k > 0 && s[k] != s[i] {
			k = f[k-1]
		}
		if s[k] == s[i] {
			k++
		}
		f[i] = k
	}
	return f
}
