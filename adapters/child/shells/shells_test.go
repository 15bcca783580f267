package shells

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

func TestAShellIsCreatedListedRenamedAndClosed(t *testing.T) {
	is := is.New(t)
	r, _ := newTestRegistry(t, Options{})
	rev0, moved := r.Revision()
	a, err := r.Create("", 80, 24)
	is.NoErr(err)                                                                 // the first shell starts
	is.Equal(a, Info{ID: a.ID, Label: "shell 1", Kind: KindShell, Running: true}) // labelled "shell 1", running, detached
	within(t, moved, "revision move at create")                                   // the revision moves
	b, err := r.Create("  logs  ", 100, 30)
	is.NoErr(err)                  // a second shell starts
	is.Equal(b.Label, "logs")      // its label is trimmed
	is.True(a.ID != b.ID)          // ids differ
	is.Equal(len(r.List()), 2)     // both are listed
	is.Equal(r.List()[0].ID, a.ID) // in creation order
	renamed, err := r.Rename(a.ID, "build")
	is.NoErr(err)                                      // a shell is renamed
	is.Equal(renamed.Label, "build")                   // with its new label
	is.Equal(r.List()[0].Label, "build")               // as listed
	is.NoErr(r.Remove(a.ID))                           // a shell is closed
	is.Equal(len(r.List()), 1)                         // and leaves the list at once
	is.Equal(r.List()[0].ID, b.ID)                     // the other stays
	is.Equal(hub.KindOf(r.Remove(a.ID)), hub.NotFound) // a closed shell is unknown
	c, err := r.Create("", 80, 24)
	is.NoErr(err)                // a third shell starts
	is.Equal(c.Label, "shell 3") // N counts up per session
	is.True(c.ID != a.ID)        // ids are never reused
	rev1, _ := r.Revision()
	is.True(rev1 > rev0) // the revision moved
}

func TestShellRefusals(t *testing.T) {
	r, _ := newTestRegistry(t, Options{})
	view := r.WatchTerminal("make test")
	agent := r.List()[0].ID
	for _, tc := range []struct {
		name string
		call func() error
		kind hub.Kind
		msg  string
	}{
		{"a label of control characters", func() error { _, err := r.Create("a\x07b", 80, 24); return err }, hub.Invalid, ""},
		{"a label too long", func() error { _, err := r.Create(strings.Repeat("é", 65), 80, 24); return err }, hub.Invalid, ""},
		{"a label with a bidi override", func() error { _, err := r.Create("log\u202Etxt.exe", 80, 24); return err }, hub.Invalid, ""},
		{"a blank label on rename", func() error { _, err := r.Rename(agent, " "); return err }, hub.Conflict, "an agent's terminal cannot be renamed"},
		{"no columns", func() error { _, err := r.Create("", 0, 24); return err }, hub.Invalid, ""},
		{"too many rows", func() error { _, err := r.Create("", 80, 501); return err }, hub.Invalid, ""},
		{"too many columns", func() error { _, err := r.Create("", 1001, 24); return err }, hub.Invalid, ""},
		{"renaming an unknown shell", func() error { _, err := r.Rename("s99", "x"); return err }, hub.NotFound, "unknown shell"},
		{"closing an agent's terminal", func() error { return r.Remove(agent) }, hub.Conflict, "an agent's terminal closes with its agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			err := tc.call()
			is.Equal(hub.KindOf(err), tc.kind) // the refusal's kind
			if tc.msg != "" {
				is.Equal(hub.MessageOf(err), tc.msg) // the refusal's message
			}
		})
	}
	t.Run("a ninth shell", func(t *testing.T) {
		is := is.New(t)
		for i := range MaxUserShells {
			_, err := r.Create("", 80, 24)
			is.NoErr(err) // shells up to the bound start
			_ = i
		}
		_, err := r.Create("", 80, 24)
		is.Equal(hub.KindOf(err), hub.RateLimited)                        // the ninth is refused
		is.Equal(hub.MessageOf(err), "too many shells in this workspace") // with the protocol's message
		is.Equal(len(r.List()), MaxUserShells+1)                          // the agent's terminal did not count
	})
	view.Release()
}

func TestTypedInputEchoesThroughTheWebSocket(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	r, srv := newTestRegistry(t, Options{Dir: dir})
	in, err := r.Create("", 80, 24)
	is.NoErr(err) // the shell starts
	tm := attach(t, srv, in.ID, "", true)
	is.Equal(tm.hello, helloMessage{Type: TypeHello, Offset: 0, Cols: 80, Rows: 24}) // hello at the start
	is.True(r.List()[0].Attached)                                                    // listed attached
	tm.input("echo \"$TERM $COLORTERM $0\"; pwd; echo end-$((6*7))\n")
	is.True(tm.see("end-42"))                                                  // the command ran
	is.True(strings.Contains(tm.out.String(), "xterm-256color truecolor -sh")) // TERM, COLORTERM, a login shell
	real, _ := filepath.EvalSymlinks(dir)
	is.True(strings.Contains(tm.out.String(), real)) // in the workspace folder
	tm.input("exit 3\n")
	is.Equal(tm.readClose(), websocket.StatusNormalClosure) // closed normally
	is.Equal(tm.reason, "exited")                           // because it exited
	last := tm.texts[len(tm.texts)-1]
	is.Equal(last["type"], "exit")         // the exit message came
	is.Equal(last["exitCode"], float64(3)) // with the code
	info := r.List()[0]
	is.True(!info.Running)      // listed as not running
	is.Equal(*info.ExitCode, 3) // with its exit code
	is.True(!info.Attached)     // nobody attached
}

func TestReattachingResumesAtItsOffsetOrReplaysTheRing(t *testing.T) {
	is := is.New(t)
	r, srv := newTestRegistry(t, Options{})
	in, err := r.Create("", 80, 24)
	is.NoErr(err) // the shell starts
	first := attach(t, srv, in.ID, "", true)
	first.input("echo one-$((1+1))\n")
	is.True(first.see("one-2")) // output arrives
	at := first.offset()
	first.conn.Close(1000, "")

	resumed := attach(t, srv, in.ID, "?offset="+itoa64(at), true)
	is.Equal(resumed.hello.Offset, at) // a held offset resumes
	resumed.input("echo two-$((2+1))\n")
	is.True(resumed.see("two-3"))                             // only new output follows
	is.True(!strings.Contains(resumed.out.String(), "one-2")) // nothing replayed
	resumed.conn.Close(1000, "")

	fresh := attach(t, srv, in.ID, "", true)
	is.Equal(fresh.hello.Offset, int64(0))                 // no offset: the ring from its start
	is.True(fresh.see("two-3"))                            // the whole screen is replayed
	is.True(strings.Contains(fresh.out.String(), "one-2")) // from the beginning
	// Past the ring: 300 KB of output overwrite its start.
	fresh.input("head -c 300000 /dev/zero | tr '\\0' x; echo; echo done-$((3+1))\n")
	is.True(fresh.see("done-4")) // the flood arrived
	fresh.conn.Close(1000, "")

	stale := attach(t, srv, in.ID, "?offset=0", true)
	is.True(stale.hello.Offset > 0)       // a stale offset resets to the ring's start
	is.True(stale.see("done-4"))          // and replays the ring
	is.True(stale.out.Len() <= RingBytes) // at most the ring
	ahead := attach(t, srv, in.ID, "?offset="+itoa64(stale.offset()+100), true)
	is.Equal(ahead.hello.Offset, stale.hello.Offset) // an offset ahead of the output resets too
}

func TestAnAgentsTerminalIsShownReadOnly(t *testing.T) {
	is := is.New(t)
	r, srv := newTestRegistry(t, Options{})
	long := "go test ./... -run " + strings.Repeat("X", 80) + "\n"
	view := r.WatchTerminal(long)
	_, _ = view.Write([]byte("compiling\n"))
	list := r.List()
	is.Equal(len(list), 1)                                             // the agent's terminal is listed
	is.Equal(list[0].Kind, KindAgent)                                  // as kind agent
	is.True(list[0].ReadOnly)                                          // read-only
	is.True(list[0].Running)                                           // running
	is.Equal(len([]rune(list[0].Label)), MaxLabel)                     // its command line, cut
	is.True(strings.HasPrefix(list[0].Label, "go test ./... -run XX")) // from its start
	tm := attach(t, srv, list[0].ID, "", true)
	is.True(tm.hello.ReadOnly)   // the hello says read-only
	is.True(tm.see("compiling")) // earlier output is replayed
	tm.input("rm -rf /\n")
	tm.send(map[string]any{"type": "resize", "cols": 10, "rows": 5})
	_, _ = view.Write([]byte("ok 42\n"))
	is.True(tm.see("ok 42"))   // later output follows; the input was ignored
	is.Equal(len(tm.texts), 0) // no resize took effect
	code := 0
	view.Exited(&code)
	is.Equal(tm.readClose(), websocket.StatusNormalClosure) // the end closes the attachment
	is.Equal(tm.texts[0]["type"], "exit")                   // after the exit message
	is.True(!r.List()[0].Running)                           // it stays listed, ended
	view.Release()
	is.Equal(len(r.List()), 0) // released, it leaves the list
}

func TestAnAgentsCommandLineBecomesAVisibleLabel(t *testing.T) {
	for _, tc := range []struct{ name, command, label string }{
		{"a plain command", "make test", "make test"},
		{"control characters become spaces", "echo a\tb\x1b[31m", "echo a b [31m"},
		{"bidi and zero-width characters are dropped", "cat \u202Egpj.exe\u200B", "cat gpj.exe"},
		{"nothing visible left", "\u202E\u200B", "terminal"},
		{"cut to the bound", strings.Repeat("x", 100), strings.Repeat("x", MaxLabel)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(agentLabel(tc.command), tc.label) // the label shown
		})
	}
}
