// Command acpagent is the scripted fake agent of the tests: a real
// program speaking ACP over stdio through the SDK's agent side
// (github.com/coder/acp-go-sdk). Each turn plays the script its prompt's
// first word names (package fakes/agentscript); updates go out as raw
// `session/update` lines so the ones the SDK does not know (notice,
// compaction_update) are sent as a real agent sends them.
//
// Flags:
//
//	--state DIR      keep sessions there, so session/load replays them
//	                 after a crash (default: a folder under TMPDIR)
//	--no-load        do not offer session/load
//	--auth-required  answer session/new with -32000 until authenticated
//	--key-var NAME   advertise an `env_var` login method, id "key", that
//	                 reads NAME: authenticate succeeds when NAME is set,
//	                 except to "refused" (-32000)
//	--raw            no SDK: a plain writer that answers initialize,
//	                 session/new and session/prompt itself and plays the
//	                 flood script as pre-encoded lines in one write, faster
//	                 than the SDK's agent side can
//	--big N          with --raw: answer with one chunk of N MiB instead
//	--legacy-models  with --raw: offer models as Gemini CLI does (a
//	                 `models` object and session/set_model)
//	--demo           a prompt that names no script plays a demonstration
//	                 turn (demo.go) instead of its echo: for screenshots
//	--auth-methods L advertise these login methods (login.go), a comma-
//	                 separated list of `agent` (id agent-login), `terminal`
//	                 (id terminal-login: `acpagent --login`, shown only to a
//	                 client declaring auth.terminal) and `env:NAME[+NAME…]`
//	                 (id env-NAME; a NAME ending in `?` is optional)
//	--logout         declare auth.logout; each logout appends a line to
//	                 the file `logouts` of --state
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	acp "github.com/coder/acp-go-sdk"
)

func main() {
	state := flag.String("state", filepath.Join(os.TempDir(), "wharf-acpagent"), "session `folder`")
	noLoad := flag.Bool("no-load", false, "do not offer session/load")
	auth := flag.Bool("auth-required", false, "refuse session/new with -32000")
	keyVar := flag.String("key-var", "", "advertise a login with the key in this environment `variable`")
	raw := flag.Bool("raw", false, "no SDK: write pre-encoded lines")
	big := flag.Int("big", 0, "with --raw: answer with one chunk of this many `MiB`")
	legacyModels := flag.Bool("legacy-models", false, "with --raw: offer models in a `models` object")
	demo := flag.Bool("demo", false, "play demonstration turns for prompts that name no script")
	authMethods := flag.String("auth-methods", "", "advertise these login `methods` (agent, terminal, env:NAME)")
	logout := flag.Bool("logout", false, "declare auth.logout and record each logout in --state")
	flag.Parse()
	methods, err := parseAuthMethods(*authMethods)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acpagent:", err)
		os.Exit(2)
	}
	if *raw {
		os.Exit(runRaw(os.Stdin, os.Stdout, *big, *legacyModels))
	}
	if err := os.MkdirAll(*state, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, "acpagent:", err)
		os.Exit(1)
	}
	out := &lockedWriter{w: os.Stdout}
	a := &agent{out: out, state: *state, load: !*noLoad, authRequired: *auth, keyVar: *keyVar, demo: *demo,
		authMethods: methods, logout: *logout, models: map[string]string{}, modes: map[string]string{}}
	a.conn = acp.NewAgentSideConnection(a, out, os.Stdin)
	<-a.conn.Done()
}

// lockedWriter writes whole lines, from the SDK and the scripts alike.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
