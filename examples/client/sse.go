package main

import (
	"bufio"
	"bytes"
	"io"
)

// event is one dispatched Server-Sent Event: its name (the `event` field,
// "message" when absent) and its data (the `data` lines joined by "\n").
type event struct {
	name string
	data string
}

// maxLineBytes bounds one line of the stream. A full document snapshot
// arrives as a single data line and can be several megabytes.
const maxLineBytes = 64 << 20

// readEvents reads Server-Sent Events from r and hands each to yield, in
// order, until yield returns false (readEvents then returns nil), r ends,
// or r fails.
//
// It follows the WHATWG event-stream rules: lines end with CRLF, LF or a
// lone CR; a line starting with ":" is a comment (`: open`, `: keepalive`)
// and is skipped; "field: value" loses one space after the colon; several
// data lines join with "\n"; an empty line dispatches the event, but only
// when it has data; `id` and `retry` are ignored (the live channel uses
// neither) and so are unknown fields. A leading byte order mark is skipped.
//
// At the end of r it returns nil when the stream ended between events, and
// io.ErrUnexpectedEOF when it ended inside one (that event is discarded).
func readEvents(r io.Reader, yield func(event) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	sc.Split(lineSplitter())
	var (
		name    string
		data    []byte
		hasData bool // a data field was seen, even an empty one
		partial bool // a line of an unfinished event was seen
		first   = true
	)
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
			first = false
		}
		if len(line) == 0 {
			if hasData {
				ev := event{name: name, data: string(bytes.TrimSuffix(data, []byte("\n")))}
				if ev.name == "" {
					ev.name = "message"
				}
				if !yield(ev) {
					return nil
				}
			}
			name, data, hasData, partial = "", data[:0], false, false
			continue
		}
		partial = true
		if line[0] == ':' {
			continue
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			data = append(append(data, value...), '\n')
			hasData = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if partial {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// lineSplitter returns a bufio.SplitFunc that yields lines ended by CRLF,
// LF or a lone CR, without their ending. An unterminated last line is
// io.ErrUnexpectedEOF. It remembers how far it has looked for a line end,
// so a multi-megabyte line arriving in small reads is scanned once.
func lineSplitter() bufio.SplitFunc {
	checked := 0
	return func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexAny(data[checked:], "\r\n"); i >= 0 {
			i += checked
			switch {
			case data[i] == '\n':
			case i+1 < len(data):
				if data[i+1] == '\n' {
					checked = 0
					return i + 2, data[:i], nil
				}
			case !atEOF:
				checked = i // a CR at the end: wait for the byte after it
				return 0, nil, nil
			}
			checked = 0
			return i + 1, data[:i], nil
		}
		if atEOF {
			if len(data) > 0 {
				return 0, nil, io.ErrUnexpectedEOF
			}
			return 0, nil, nil
		}
		checked = len(data)
		return 0, nil, nil
	}
}
