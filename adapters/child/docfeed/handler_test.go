package docfeed

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/childproto"
)

// sseEvent is one event or comment read from a stream.
type sseEvent struct {
	comment string
	event   string
	data    string
}

// readEvents parses an SSE body into a channel, closed at its end.
func readEvents(body io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				out <- ev
				ev = sseEvent{}
			case strings.HasPrefix(line, ": "):
				ev.comment = strings.TrimPrefix(line, ": ")
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

func TestHandler(t *testing.T) {
	t.Parallel()
	root, f, _ := liveScene(t, map[string]string{"a.md": "a\n"})
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)

	t.Run("stream", func(t *testing.T) {
		is := is.New(t)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"?key="+url.QueryEscape("compareTarget=last-commit"), nil)
		resp, err := http.DefaultClient.Do(req)
		is.NoErr(err) // request
		defer resp.Body.Close()
		is.Equal(resp.StatusCode, http.StatusOK)                       // streaming
		is.Equal(resp.Header.Get("Content-Type"), "text/event-stream") // SSE
		is.Equal(resp.Header.Get("Cache-Control"), "no-cache")         // as the stream requires
		events := readEvents(resp.Body)
		first := <-events
		is.Equal(first.event, childproto.EventData) // frames are data events
		c := &client{t: t}
		snap := c.apply([]byte(first.data))
		is.Equal(snap.Kind, "snapshot")                 // snapshot first
		is.Equal(snap.CompareTarget, CompareLastCommit) // the key's context

		writeFiles(t, root, map[string]string{"a.md": "changed\n"})
		sawPatch, sawKeepAlive := false, false
		for ev := range events {
			switch {
			case ev.comment == "keepalive":
				sawKeepAlive = true
			case ev.event == childproto.EventData:
				if fr := c.apply([]byte(ev.data)); fr.Kind == "patch" && len(fr.Upserts) == 1 {
					sawPatch = true
				}
			}
			if sawPatch && sawKeepAlive {
				break
			}
		}
		is.True(sawPatch)     // the save arrived as a patch
		is.True(sawKeepAlive) // keepalive comments while idle
	})

	for _, tc := range []struct {
		name, method, query string
		status              int
		msg                 string
	}{
		{"unknown parameter", "GET", "?key=" + url.QueryEscape("colour=blue"), 400, "unknown parameter"},
		{"file scope without document", "GET", "?key=scope%3Dfile", 400, "requires documentId"},
		{"two keys", "GET", "?key=&key=", 400, "more than once"},
		{"a parameter but key", "GET", "?key=&cursor=c", 400, "takes only key"},
		{"POST", "POST", "", 405, "method not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			req, _ := http.NewRequest(tc.method, srv.URL+tc.query, nil)
			resp, err := http.DefaultClient.Do(req)
			is.NoErr(err) // request
			defer resp.Body.Close()
			is.Equal(resp.StatusCode, tc.status)                          // refused
			is.Equal(resp.Header.Get("Content-Type"), "application/json") // a JSON body
			var body struct{ Error string }
			is.NoErr(json.NewDecoder(resp.Body).Decode(&body)) // decodes
			is.True(strings.Contains(body.Error, tc.msg))      // says why
		})
	}
}
