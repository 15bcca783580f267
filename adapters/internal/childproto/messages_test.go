package childproto_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

func TestFactsRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range []childproto.Facts{
		{WorkspaceAPIRevision: 24, Shells: []childproto.Shell{}},
		{WorkspaceAPIRevision: 25, Shells: []childproto.Shell{{Attached: true, Label: "zsh"}, {Label: "ünïcode \"quoted\""}}},
	} {
		is := is.New(t)
		rec := httptest.NewRecorder()
		childproto.WriteJSON(rec, http.StatusOK, f)
		is.Equal(rec.Header().Get("Content-Type"), "application/json") // as JSON
		is.Equal(rec.Header().Get("Cache-Control"), "no-store")        // never cached
		got, err := childproto.ReadFacts(rec.Body)
		is.NoErr(err)    // decoded
		is.Equal(got, f) // the facts back
	}
}

func TestDecodeFactsRefuses(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		``, `null`, `[]`, `"facts"`, `{`, `{"workspaceApiRevision":24} {}`,
		`{"shells":[]}`, `{"workspaceApiRevision":0,"shells":[]}`, `{"workspaceApiRevision":-1}`,
		`{"workspaceApiRevision":"24"}`, `{"workspaceApiRevision":24,"shells":{}}`,
		`{"workspaceApiRevision":24,"shells":[{"attached":"yes"}]}`,
	} {
		is := is.New(t)
		_, err := childproto.DecodeFacts([]byte(body))
		is.True(err != nil) // malformed facts are refused
	}
}

func TestDecodeFactsLeniency(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	f, err := childproto.DecodeFacts([]byte(` {"workspaceApiRevision":24,"shells":null,"future":1}` + "\n"))
	is.NoErr(err)                                  // unknown fields and null shells are accepted
	is.Equal(f.WorkspaceAPIRevision, 24)           // the revision
	is.True(f.Shells != nil && len(f.Shells) == 0) // and no shell, never nil
}

func TestReadFactsBound(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	pad := strings.Repeat(" ", childproto.MaxFactsBytes)
	_, err := childproto.ReadFacts(strings.NewReader(`{"workspaceApiRevision":24}` + pad))
	is.True(err != nil)                            // an answer over the bound is refused
	is.True(strings.Contains(err.Error(), "over")) // saying so
	_, err = childproto.ReadFacts(strings.NewReader(`{"workspaceApiRevision":24}` + pad[:100]))
	is.NoErr(err) // within the bound it is read
}

func TestErrorRoundTrip(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	rec := httptest.NewRecorder()
	childproto.WriteError(rec, http.StatusNotFound, "unknown conversation")
	is.Equal(rec.Code, http.StatusNotFound)                              // the status
	is.Equal(rec.Header().Get("Content-Type"), "application/json")       // as JSON
	is.Equal(rec.Header().Get("Cache-Control"), "no-store")              // never cached
	is.Equal(rec.Body.String(), `{"error":"unknown conversation"}`+"\n") // the shape
	e, err := childproto.DecodeError(rec.Body.Bytes())
	is.NoErr(err)                                                    // decoded
	is.Equal(e, childproto.ErrorBody{Error: "unknown conversation"}) // the message back

	for _, body := range []string{``, `{}`, `{"error":""}`, `{"error":1}`, `"error"`, `nope`, `{"error":"a"}x`} {
		_, err := childproto.DecodeError([]byte(body))
		is.True(err != nil) // a malformed error answer is refused
	}
}

func TestPayloadsRoundTrip(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, a := range []childproto.Activity{{}, {Working: true}, {Awaiting: true}, {Working: true, Awaiting: true}, {Shells: 7}} {
		got, err := childproto.DecodeActivity(mustJSON(t, a))
		is.NoErr(err)    // decoded
		is.Equal(got, a) // the activity back
	}
	tick := childproto.InventoryTick{Type: childproto.InventoryTickType}
	gotTick, err := childproto.DecodeInventoryTick(mustJSON(t, tick))
	is.NoErr(err)           // decoded
	is.Equal(gotTick, tick) // the tick back
	for _, o := range []childproto.Open{{}, {Cursor: "eyJ2IjoxfQ=="}} {
		got, err := childproto.DecodeOpen(mustJSON(t, o))
		is.NoErr(err)    // decoded
		is.Equal(got, o) // the cursor back, even empty
	}
}

func TestAnActivityFromAnOlderChildHasShellRevisionZero(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	got, err := childproto.DecodeActivity([]byte(`{"working":true,"awaiting":false}`))
	is.NoErr(err)                                     // a frame without shells decodes
	is.Equal(got, childproto.Activity{Working: true}) // with revision 0
	_, err = childproto.DecodeActivity([]byte(`{"working":true,"awaiting":false,"shells":"1"}`))
	is.True(err != nil) // a revision is a number
}

func TestPayloadsRefuse(t *testing.T) {
	t.Parallel()
	is := is.New(t)
	for _, data := range []string{``, `null`, `[]`, `{}`, `{"working":true}`, `{"awaiting":false}`, `{"working":1,"awaiting":false}`} {
		_, err := childproto.DecodeActivity([]byte(data))
		is.True(err != nil) // an activity needs both booleans
	}
	for _, data := range []string{``, `{}`, `{"type":"conversation.other"}`, `{"type":1}`} {
		_, err := childproto.DecodeInventoryTick([]byte(data))
		is.True(err != nil) // a tick has its type
	}
	for _, data := range []string{``, `{}`, `{"cursor":null}`, `{"cursor":1}`, `["cursor"]`} {
		_, err := childproto.DecodeOpen([]byte(data))
		is.True(err != nil) // an open event needs its cursor
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
