package hostop

import (
	"bytes"
	"context"
	"testing"

	"github.com/wharfhub/wharf/fakes"
)

// FuzzDecodeFrame feeds the frame reader and the strict decoding of both
// ends arbitrary bytes (the operations' frames and a clone's), and a
// worktree operation's arguments to the server's handler (over a fake
// git): nothing panics, and nothing over the bound is read.
func FuzzDecodeFrame(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x1a{\"id\":1,\"op\":\"lstat\",\"path\":\"/\"}"))
	f.Add([]byte("\x00\x00\x00\x10{\"id\":1,\"err\":{}}"))
	f.Add([]byte("\x7f\xff\xff\xff"))
	f.Add([]byte("\x00\x00\x00\x02{}"))
	f.Add([]byte("\x00\x00\x00\x3b{\"id\":2,\"op\":\"addWorktree\",\"args\":{\"Main\":\"/\",\"Mode\":\"x\"}}"))
	f.Add([]byte("\x00\x00\x00\x3f{\"protocol\":\"wharf-hostop/1\",\"url\":\"x\",\"target\":\"/a\",\"lent\":{}}"))
	f.Add([]byte("\x00\x00\x00\x1e{\"done\":true,\"err\":{\"kind\":3}}"))
	git := fakes.NewGit(fakes.NewFS("/home/ann"))
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := readFrame(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(body) > maxFrame {
			t.Fatalf("read %d bytes, over the bound", len(body))
		}
		var req request
		if decodeStrict(body, &req) == nil {
			if run, ok := worktreeOps[req.Op]; ok {
				s := &server{git: git}
				_ = s.worktree(context.Background(), req, run)
			}
		}
		var resp response
		if decodeStrict(body, &resp) == nil {
			_ = fromWire(resp.Err)
		}
		var creq lentRequest
		_ = decodeStrict(body, &creq)
		var cf lentFrame
		if decodeStrict(body, &cf) == nil {
			_ = fromWire(cf.Err)
		}
	})
}
