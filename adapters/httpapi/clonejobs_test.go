package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub/service"
)

// cloneFrame is one event of a clone job's stream.
type cloneFrame struct{ id, event, data string }

// cloneFrames reads a finished clone job's stream (it closes after the
// result), checking each event's data against the contract.
func (s *testServer) cloneFrames(t *testing.T, id, lastEventID string, auth []string) []cloneFrame {
	t.Helper()
	// The contract transport decodes whole bodies, which a stream is not:
	// the stream is read with the plain client and checked event by event
	// here, as the live stream's tests check theirs.
	req, err := http.NewRequestWithContext(t.Context(), "GET", s.URL+"/api/hub/clone-jobs/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(auth); i += 2 {
		req.Header.Add(auth[i], auth[i+1])
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := s.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body) // the stream ends after the result
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("events: %d %s %v", resp.StatusCode, body, err)
	}
	for name, want := range map[string]string{"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache, no-transform"} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}
	validated.Lock()
	validated.ops["hubStreamCloneJobEvents"] = true
	validated.Unlock()
	var out []cloneFrame
	for _, block := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		var f cloneFrame
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "id: "):
				f.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				f.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				f.data = line[6:]
			case strings.HasPrefix(line, ": "):
			default:
				t.Errorf("line %q is not one the Hub writes", line)
			}
		}
		if f.event == "" {
			continue
		}
		schema := map[string]string{"output": "CloneOutput", "phase": "ClonePhase", "result": "CloneResult"}[f.event]
		if msg := checkSchema(schema, f.data); msg != "" {
			t.Errorf("%s event %s: %s", f.event, f.data, msg)
		}
		out = append(out, f)
	}
	return out
}

func TestACloneJobOverHTTP(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.fs.MkdirAll("/home/ann/src")
	s.git.ScriptClone("https://example.com/me/app.git", fakes.CloneScript{Output: []string{"Cloning into 'app'...\r\n"}})

	r := s.do(t, "POST", "/api/hub/clone-jobs", `{"url":"https://example.com/me/app.git","dest":"/home/ann/src","displayName":"App"}`, auth...)
	is.Equal(r.status, http.StatusAccepted) // accepted
	var job struct{ JobID string }
	r.json(t, &job)
	frames := s.cloneFrames(t, job.JobID, "", auth)
	is.Equal(frames[0].event, "phase")              // the first event is a phase
	is.Equal(frames[0].data, `{"phase":"cloning"}`) // cloning
	last := frames[len(frames)-1]
	is.Equal(last.event, "result")                                       // the stream closes after the result
	is.True(strings.Contains(last.data, `"status":"succeeded"`))         // succeeded
	is.True(strings.Contains(last.data, `"target":"/home/ann/src/app"`)) // into app

	replay := s.cloneFrames(t, job.JobID, "2", auth)
	is.Equal(replay[0].id, "3")                                              // Last-Event-ID replays what follows
	is.Equal(replay[len(replay)-1].event, "result")                          // to the result
	is.Equal(len(s.cloneFrames(t, job.JobID, "garbage", auth)), len(frames)) // garbage counts as 0

	r = s.do(t, "HEAD", "/api/hub/clone-jobs/"+job.JobID+"/events", "", auth...)
	is.Equal(r.status, http.StatusNoContent) // the job exists
	bob := bearer(s.login(t, "bob", bobPassword))
	r = s.do(t, "HEAD", "/api/hub/clone-jobs/"+job.JobID+"/events", "", bob...)
	is.Equal(r.status, http.StatusNotFound)                                                                      // not for another user
	is.Equal(len(r.body), 0)                                                                                     // with no body
	is.Equal(r.header.Get("Content-Type"), "application/json")                                                   // and the JSON type
	is.Equal(s.do(t, "GET", "/api/hub/clone-jobs/"+job.JobID+"/events", "", bob...).status, http.StatusNotFound) // nor its stream

	r = s.do(t, "POST", "/api/hub/clone-jobs/"+job.JobID+"/input", `{"input":"yes"}`, auth...)
	is.Equal(r.status, http.StatusConflict) // a finished job takes no input
	r = s.do(t, "POST", "/api/hub/clone-jobs/"+job.JobID+"/cancel", "", auth...)
	is.Equal(r.status, http.StatusOK)
	is.Equal(string(r.body), `{"status":"terminal"}`+"\n") // cancel is idempotent
}

func TestACloneJobsPromptIsAnsweredAndItsInputBounded(t *testing.T) {
	is := is.New(t)
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.secret("s3cret-answer")
	s.fs.MkdirAll("/home/ann/src")
	s.git.ScriptClone("https://example.com/me/p.git", fakes.CloneScript{Prompts: []string{"Username for 'https://example.com': "}, Answers: []string{"s3cret-answer"}})
	r := s.do(t, "POST", "/api/hub/clone-jobs", `{"url":"https://example.com/me/p.git","dest":"/home/ann/src"}`, auth...)
	var job struct{ JobID string }
	r.json(t, &job)
	r = s.do(t, "POST", "/api/hub/clone-jobs/"+job.JobID+"/input", `{"input":"`+strings.Repeat("x", 8193)+`"}`, auth...)
	is.Equal(r.status, http.StatusRequestEntityTooLarge) // over 8 KiB: 413
	is.Equal(r.header.Get("Cache-Control"), "no-store")  // no-store
	r = s.do(t, "POST", "/api/hub/clone-jobs/"+job.JobID+"/input", `{"input":"s3cret-answer"}`, auth...)
	is.Equal(r.status, http.StatusOK)                  // the answer goes to the prompt
	is.Equal(string(r.body), `{"accepted":true}`+"\n") // accepted
	frames := s.cloneFrames(t, job.JobID, "", auth)
	for _, f := range frames {
		is.True(!strings.Contains(f.data, "s3cret-answer")) // never in the events
	}
	is.True(strings.Contains(frames[len(frames)-1].data, `"status":"succeeded"`)) // the clone went on
}

func TestBadCloneRequestsAreRefusedAndReserveNothing(t *testing.T) {
	s := newServer(t, service.Config{}, nil)
	auth := bearer(s.login(t, "ann", annPassword))
	s.fs.MkdirAll("/home/ann/src/taken")
	for _, tc := range []struct {
		name, body string
		status     int
	}{
		{"a relative dest", `{"url":"https://example.com/a.git","dest":"src"}`, 400},
		{"a folder name of ..", `{"url":"https://example.com/a.git","dest":"/home/ann/src","folderName":".."}`, 400},
		{"a folder name a/b", `{"url":"https://example.com/a.git","dest":"/home/ann/src","folderName":"a/b"}`, 400},
		{"embedded credentials", `{"url":"https://u:p@example.com/a.git","dest":"/home/ann/src"}`, 400},
		{"an unknown credential", `{"url":"https://example.com/a.git","dest":"/home/ann/src","credentialId":"nope"}`, 400},
		{"an unknown field", `{"url":"https://example.com/a.git","dest":"/home/ann/src","depth":1}`, 400},
		{"an existing target", `{"url":"https://example.com/taken.git","dest":"/home/ann/src"}`, 409},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			r := s.do(t, "POST", "/api/hub/clone-jobs", tc.body, auth...)
			is.Equal(r.status, tc.status)            // its status
			is.True(r.errorText(t) != "")            // with a message
			is.Equal(s.git.Calls(fakes.GitClone), 0) // git never ran
		})
	}
	r := s.do(t, "POST", "/api/hub/clone-jobs", `{"url":"https://example.com/ok.git","dest":"/home/ann/src"}`, auth...)
	if r.status != http.StatusAccepted {
		t.Fatalf("a good request after the bad ones: %d %s", r.status, r.body) // nothing was left reserved
	}
}
