// Package driver holds what the agent-account drivers share: finding an
// agent's command, delivering a pasted redirect to a login's loopback
// listener, and the settle-once bookkeeping of a login flow.
package driver

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// LookPath finds command in the PATH of env (the runtime's environment,
// not the Hub's): an absolute command is checked as it is. Not found is
// an error satisfying errors.Is(err, hub.ErrAgentNotInstalled) whose
// public message names the command.
func LookPath(name, command string, env []string) (string, error) {
	notFound := func(cause error) (string, error) {
		return "", &hub.Error{Kind: hub.Conflict, Err: errors.Join(hub.ErrAgentNotInstalled, cause),
			Message: name + " is not installed on the Hub machine: `" + command + "` was not found."}
	}
	if filepath.IsAbs(command) {
		if _, err := exec.LookPath(command); err != nil {
			return notFound(err)
		}
		return command, nil
	}
	for _, dir := range filepath.SplitList(Getenv(env, "PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would find a repository's program
		}
		p := filepath.Join(dir, command)
		if _, err := exec.LookPath(p); err == nil {
			return p, nil
		}
	}
	return notFound(exec.ErrNotFound)
}

// Getenv is the value of name in env, the last entry winning as it does
// for exec.Cmd.
func Getenv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// DeliverTimeout bounds the one request Deliver makes.
const DeliverTimeout = 10 * time.Second

// ErrListenerSilent is the public refusal when a login's listener did
// not answer.
const ErrListenerSilent = "The login's listener on the Hub machine did not answer. Start the login again."

// Deliver requests address (checked by the core against the login's own
// callback) once, with GET, following no redirect, within DeliverTimeout,
// and discards the answer: the listener reads the code from the query.
// Any answer is delivered; no answer is Invalid with field "address".
// The address never reaches an error.
func Deliver(ctx context.Context, address string) error {
	ctx, cancel := context.WithTimeout(ctx, DeliverTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, address, nil)
	if err != nil {
		return &hub.Error{Kind: hub.Invalid, Message: "The address is not one the Hub can request.", Details: &hub.Details{Field: "address"}}
	}
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return &hub.Error{Kind: hub.Invalid, Message: ErrListenerSilent, Details: &hub.Details{Field: "address"}}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return nil
}

// Settle is the settle-once part of a login flow: Done, Err and the
// first outcome winning. The zero value is not ready: use NewSettle.
type Settle struct {
	once sync.Once
	done chan struct{}
	err  error
}

// NewSettle returns an unsettled Settle.
func NewSettle() *Settle { return &Settle{done: make(chan struct{})} }

// Finish settles with err (nil: the login completed); later calls are
// ignored. It reports whether this call settled it.
func (s *Settle) Finish(err error) bool {
	first := false
	s.once.Do(func() {
		s.err, first = err, true
		close(s.done)
	})
	return first
}

// Done is closed once settled.
func (s *Settle) Done() <-chan struct{} { return s.done }

// Err is the outcome; valid once Done is closed.
func (s *Settle) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}
