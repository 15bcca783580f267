package clone

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// MaxOutputEvents bounds how many output events a job retains, whatever
// their size: a program writing a byte at a time must not cost an event
// record per byte for 64 KiB.
const MaxOutputEvents = 4096

// Log is a job's event channel as it is replayed: events numbered from 1
// in the order they happened. Phase and result events are always kept;
// output events are kept while their text totals at most MaxOutputBytes
// (UTF-8 bytes) and MaxOutputEvents, the oldest going first, so replayed
// ids may have gaps. A result is the last event. Memory is bounded: at
// most MaxOutputBytes of text in at most MaxOutputEvents records, three
// phases and one result.
//
// What is retained is what a terminal would show: a progress part that
// a later "\r" replaces is dropped from the retained text (the live
// event a watcher received kept it), so a long clone's progress does not
// evict its earlier lines. Replaying the retained events after any id a
// client holds shows that client the screen the live events showed.
type Log struct {
	outputs     []hub.CloneEvent // retained output, oldest first, from head
	head        int
	marks       []hub.CloneEvent // phases and the result
	next        int64
	outputBytes int
	ended       bool
}

var (
	errLogEnded = hub.Errorf(hub.Internal, "clone job events already ended with a result")
	errLogEvent = hub.Errorf(hub.Internal, "a clone job event must be one non-empty output, phase or result")
)

// Append numbers e (the next id, from 1) and retains it; it answers the
// event as watchers receive it, the output whole. An event after the
// result, or one that is not exactly one non-empty output, phase or
// result, is an Internal error (the caller's bug) and changes nothing.
func (l *Log) Append(e hub.CloneEvent) (hub.CloneEvent, error) {
	kinds := 0
	for _, set := range []bool{e.Output != "", e.Phase != "", e.Result != nil} {
		if set {
			kinds++
		}
	}
	switch {
	case l.ended:
		return hub.CloneEvent{}, errLogEnded
	case kinds != 1:
		return hub.CloneEvent{}, errLogEvent
	}
	l.next++
	e.ID = l.next
	if e.Output == "" {
		if e.Result != nil {
			r := *e.Result
			e.Result, l.ended = &r, true
		}
		l.marks = append(l.marks, e)
		return e, nil
	}
	kept := e
	kept.Output = l.replaceLine(collapse(e.Output))
	if len(kept.Output) > MaxOutputBytes {
		kept.Output = utf8Tail(kept.Output, MaxOutputBytes)
	}
	if kept.Output != "" {
		l.outputs = append(l.outputs, kept)
		l.outputBytes += len(kept.Output)
	}
	for l.outputBytes > MaxOutputBytes || len(l.outputs)-l.head > MaxOutputEvents {
		l.outputBytes -= len(l.outputs[l.head].Output)
		l.outputs[l.head] = hub.CloneEvent{}
		l.head++
	}
	if l.head > len(l.outputs)/2 {
		l.outputs = append(l.outputs[:0], l.outputs[l.head:]...)
		l.head = 0
	}
	return e, nil
}

// After answers the retained events with an id greater than last, in
// order: what a client sending Last-Event-ID: last is replayed.
func (l *Log) After(last int64) []hub.CloneEvent {
	var out []hub.CloneEvent
	outs, marks := l.outputs[l.head:], l.marks
	for len(outs) > 0 || len(marks) > 0 {
		var e hub.CloneEvent
		if len(marks) == 0 || len(outs) > 0 && outs[0].ID < marks[0].ID {
			e, outs = outs[0], outs[1:]
		} else {
			e, marks = marks[0], marks[1:]
		}
		if e.ID > last {
			out = append(out, e)
		}
	}
	return out
}

// Ended reports whether the log holds the job's result.
func (l *Log) Ended() bool { return l.ended }

// LastID is the id of the last event appended (0 before the first).
func (l *Log) LastID() int64 { return l.next }

// OutputBytes is the retained output's size in UTF-8 bytes.
func (l *Log) OutputBytes() int { return l.outputBytes }

// ParseLastEventID reads a Last-Event-ID header: a base-10 integer of
// digits only, at least 0. Anything else — empty, negative, signed,
// spaced, not a number, beyond int64 — counts as 0: replay from the
// start, never an error (a garbled header must not lose a reconnect).
func ParseLastEventID(header string) int64 {
	if header == "" || strings.Trim(header, "0123456789") != "" {
		return 0
	}
	n, err := strconv.ParseInt(header, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// collapse drops from text each part of a line that a later "\r" on the
// same line replaces. A replacement in the text's first line keeps its
// "\r": it also replaces what earlier events put on that line.
func collapse(text string) string {
	if !strings.Contains(text, "\r") {
		return text
	}
	var b strings.Builder
	for i, line := range strings.SplitAfter(text, "\n") {
		if cr := strings.LastIndexByte(line, '\r'); cr >= 0 {
			if i == 0 {
				line = line[cr:]
			} else {
				line = line[cr+1:]
			}
		}
		b.WriteString(line)
	}
	return b.String()
}

// replaceLine applies a leading "\r" of text to the retained output: the
// current line's part in the latest output events (up to their last line
// end, and not across a phase or result) is dropped. The "\r" stays: a
// client that received the dropped part live needs it.
func (l *Log) replaceLine(text string) string {
	if !strings.HasPrefix(text, "\r") {
		return text
	}
	for len(l.outputs) > l.head {
		last := &l.outputs[len(l.outputs)-1]
		if len(l.marks) > 0 && l.marks[len(l.marks)-1].ID > last.ID {
			return text
		}
		if nl := strings.LastIndexByte(last.Output, '\n'); nl >= 0 {
			l.outputBytes -= len(last.Output) - (nl + 1)
			last.Output = last.Output[:nl+1]
			return text
		}
		l.outputBytes -= len(last.Output)
		l.outputs = l.outputs[:len(l.outputs)-1]
	}
	return text
}

// utf8Tail is the last at most n bytes of s, starting at a character.
func utf8Tail(s string, n int) string {
	s = s[len(s)-n:]
	for k := 0; k < utf8.UTFMax && s != "" && !utf8.RuneStart(s[0]); k++ {
		s = s[1:]
	}
	return s
}
