package shells

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeClientMessage holds the client message decoder to its
// contract on any bytes: it never panics, and what it accepts is one of
// the three types with its fields in bounds, which encodes back to a
// message it accepts as the same.
func FuzzDecodeClientMessage(f *testing.F) {
	for _, seed := range []string{
		`{"type":"input","data":"ls\n"}`, `{"type":"resize","cols":80,"rows":24}`, `{"type":"ack","offset":123}`,
		`{"type":"ack","offset":-1}`, `{"type":"resize","cols":0,"rows":1}`, `{"type":"input"}`, `{}`, `[]`, `{"type":"input","data":"a"} x`,
		`{"type":"input","data":"\u0003","data":"b"}`, `{"type":"ack","offset":1e3}`, "\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeClientMessage(b)
		if err != nil {
			if len(err.Error()) > 123 {
				t.Fatalf("a close reason holds at most 123 bytes: %q", err)
			}
			return
		}
		var again []byte
		switch m.Type {
		case TypeInput:
			again, _ = json.Marshal(map[string]any{"type": m.Type, "data": m.Data})
		case TypeResize:
			if CheckSize(m.Cols, m.Rows) != nil {
				t.Fatalf("resize out of bounds accepted: %+v", m)
			}
			again, _ = json.Marshal(map[string]any{"type": m.Type, "cols": m.Cols, "rows": m.Rows})
		case TypeAck:
			if m.Offset < 0 {
				t.Fatalf("negative ack accepted: %+v", m)
			}
			again, _ = json.Marshal(map[string]any{"type": m.Type, "offset": m.Offset})
		default:
			t.Fatalf("unknown type accepted: %+v", m)
		}
		m2, err := DecodeClientMessage(again)
		if err != nil || m2 != m {
			t.Fatalf("%+v re-encoded as %s decodes as %+v, %v", m, again, m2, err)
		}
	})
}
