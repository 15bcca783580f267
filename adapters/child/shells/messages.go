package shells

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxClientMessage bounds a client's message; a longer one closes the
// attachment with 1009.
const MaxClientMessage = 64 << 10

// The types of the attach WebSocket's text messages.
const (
	TypeHello  = "hello"  // server: the first message
	TypeResize = "resize" // both: the terminal's size
	TypeExit   = "exit"   // server: the process ended
	TypeSkip   = "skip"   // server, agent terminals: output was dropped
	TypeInput  = "input"  // client: keys or a paste
	TypeAck    = "ack"    // client: output processed up to an offset
)

// ClientMessage is a message a client sends: input (Data), resize (Cols,
// Rows) or ack (Offset).
type ClientMessage struct {
	Type   string
	Data   string
	Cols   int
	Rows   int
	Offset int64
}

// DecodeClientMessage decodes one client message: a JSON object of a
// known type with exactly that type's fields (no other), a resize within
// the size bounds, an ack at a non-negative offset. The error is short
// enough to be a close reason.
func DecodeClientMessage(b []byte) (ClientMessage, error) {
	if len(b) > MaxClientMessage {
		return ClientMessage{}, errors.New("message too long")
	}
	var m struct {
		Type   string  `json:"type"`
		Data   *string `json:"data"`
		Cols   *int    `json:"cols"`
		Rows   *int    `json:"rows"`
		Offset *int64  `json:"offset"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return ClientMessage{}, errors.New("not a JSON object")
	}
	if err := d.Decode(&m); err != nil {
		return ClientMessage{}, errors.New("malformed message")
	}
	if d.More() {
		return ClientMessage{}, errors.New("trailing data")
	}
	switch m.Type {
	case TypeInput:
		if m.Data == nil || m.Cols != nil || m.Rows != nil || m.Offset != nil {
			return ClientMessage{}, errors.New("input holds data only")
		}
		return ClientMessage{Type: TypeInput, Data: *m.Data}, nil
	case TypeResize:
		if m.Cols == nil || m.Rows == nil || m.Data != nil || m.Offset != nil {
			return ClientMessage{}, errors.New("resize holds cols and rows only")
		}
		if CheckSize(*m.Cols, *m.Rows) != nil {
			return ClientMessage{}, fmt.Errorf("a terminal has 1 to %d columns and 1 to %d rows", MaxCols, MaxRows)
		}
		return ClientMessage{Type: TypeResize, Cols: *m.Cols, Rows: *m.Rows}, nil
	case TypeAck:
		if m.Offset == nil || *m.Offset < 0 || m.Data != nil || m.Cols != nil || m.Rows != nil {
			return ClientMessage{}, errors.New("ack holds an offset only")
		}
		return ClientMessage{Type: TypeAck, Offset: *m.Offset}, nil
	}
	return ClientMessage{}, errors.New("unknown message type")
}

// The server's text messages.
type (
	helloMessage struct {
		Type     string `json:"type"`
		Offset   int64  `json:"offset"`
		ReadOnly bool   `json:"readOnly"`
		Cols     int    `json:"cols"`
		Rows     int    `json:"rows"`
	}
	resizeMessage struct {
		Type string `json:"type"`
		Cols int    `json:"cols"`
		Rows int    `json:"rows"`
	}
	exitMessage struct {
		Type     string `json:"type"`
		ExitCode *int   `json:"exitCode"`
	}
	skipMessage struct {
		Type   string `json:"type"`
		Offset int64  `json:"offset"`
	}
)

// encode is v's JSON, which plain values always have.
func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("shells: a message does not encode: " + err.Error())
	}
	return b
}
