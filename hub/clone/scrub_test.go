package clone_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub/clone"
)

// scrub adds inputs to a new scrubber, feeds it chunks and flushes it.
func scrub(inputs []string, chunks ...string) string {
	var sc clone.Scrubber
	for _, in := range inputs {
		sc.Add(in)
	}
	var out []byte
	for _, c := range chunks {
		out = sc.Write(out, []byte(c))
	}
	return string(sc.Flush(out))
}

// TestInputsAreScrubbedFromLaterOutput copies research §11.5's scrubbing
// rows (including "split-" + "response" and a trailing "submitted-sec"
// at the end) with §14's change: inputs under 4 bytes are not secrets.
func TestInputsAreScrubbedFromLaterOutput(t *testing.T) {
	for _, tc := range []struct {
		row    string
		inputs []string
		chunks []string
		want   string
	}{
		{"11.5 an echoed secret", []string{"hunter22"}, []string{"Password: hunter22\n"}, "Password: \n"},
		{"11.5 every occurrence", []string{"hunter22"}, []string{"hunter22 and hunter22\n"}, " and \n"},
		{"11.5 split across chunks", []string{"split-response"}, []string{"got split-", "response!\n"}, "got !\n"},
		{"11.5 a secret's start held, then not a secret", []string{"split-response"}, []string{"a split-", "second\n"}, "a split-second\n"},
		{"11.5 a trailing start of a secret is dropped at the end", []string{"submitted-secret"}, []string{"echo: submitted-sec"}, "echo: "},
		{"14 a short answer is no secret", []string{"yes"}, []string{"yes, a yesterday\n"}, "yes, a yesterday\n"},
		{"14 four bytes are", []string{"1234"}, []string{"code 1234 ok\n"}, "code  ok\n"},
		{"each line of an input", []string{"user1\nhunter22\r\n"}, []string{"user1 hunter22\n"}, " \n"},
		{"overlapping occurrences", []string{"abab"}, []string{"xababab y\n"}, "x y\n"},
		{"two secrets overlapping", []string{"abcd", "cdef"}, []string{"xabcdefy\n"}, "xy\n"},
		{"a held secret's end may start another", []string{"abcd", "cdef"}, []string{"ab", "ab", "cd", "cd", "xa", "bc", "de", "fy"}, "abcxy"},
		{"the longer secret wins where both start", []string{"pass", "password"}, []string{"password!\n"}, "!\n"},
		{"a join that spells a secret loses its last character", []string{"abcd"}, []string{"ab", "abcd", "cd\n"}, "abc\n"},
		{"a secret split at every byte", []string{"hunter22"}, strings.Split("<hunter22>", ""), "<>"},
		{"a multi-byte secret", []string{"pässwörd"}, []string{"p\xc3", "\xa4sswörd!"}, "!"},
		{"no secrets passes text through", nil, []string{"a", "b"}, "ab"},
		{"text unlike any secret passes through", []string{"hunter22"}, []string{"Receiving objects: 100%\n"}, "Receiving objects: 100%\n"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			is.Equal(scrub(tc.inputs, tc.chunks...), tc.want)                // chunk by chunk
			is.Equal(scrub(tc.inputs, strings.Join(tc.chunks, "")), tc.want) // and whole
		})
	}
}

func TestOnlyTheSixteenMostRecentInputsAreKept(t *testing.T) {
	is := is.New(t)
	var sc clone.Scrubber
	sc.Add("first-secret")
	for i := range clone.MaxScrubInputs - 1 {
		sc.Add("answer-" + strings.Repeat("x", i))
	}
	sc.Add("first-secret") // typed again: it is recent again
	for i := range clone.MaxScrubInputs - 1 {
		sc.Add("other-" + strings.Repeat("y", i))
	}
	out := string(sc.Flush(sc.Write(nil, []byte("first-secret answer-x\n"))))
	is.Equal(out, " answer-x\n") // the re-typed input is kept, the older ones dropped

	sc.Add("newest-secret")
	out = string(sc.Flush(sc.Write(nil, []byte("first-secret newest-secret\n"))))
	is.Equal(out, "first-secret \n") // after 16 later inputs the oldest is no longer scrubbed
}

func TestTheHeldBackOutputIsBounded(t *testing.T) {
	is := is.New(t)
	var sc clone.Scrubber
	sc.Add(strings.Repeat("a", 100) + "!")
	out := sc.Write(nil, []byte(strings.Repeat("a", 10000)))
	is.Equal(len(out), 10000-100) // only the longest secret less one byte waits
}
