package fakes

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// GitClone names Clone for FailNext and Calls.
const GitClone = "clone"

// CloneScript scripts the clones of one URL (ScriptClone): what git
// writes to its terminal, the prompts it waits at, and how it ends. The
// zero value writes one line and succeeds.
type CloneScript struct {
	// Output is written first, one chunk per Read at most.
	Output []string
	// Prompts are then written one at a time, each waiting for a line
	// of input; "{answer}" in a prompt stands for the previous answer.
	// A real terminal echoes what is typed unless the program turns
	// echo off (a password prompt); the fake echoes nothing.
	Prompts []string
	// Answers are the lines that let the clone go on, one per prompt; a
	// different answer fails it at once (exit status 128), as git fails
	// when the host refuses a credential.
	Answers []string
	// Stall makes the clone wait, after its prompts, until it is killed.
	Stall bool
	// Exit is the exit status it ends with; 0 makes the target a
	// repository (on branch "main").
	Exit int
}

// ScriptClone makes every later Clone of url follow s.
func (g *Git) ScriptClone(url string, s CloneScript) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.clones == nil {
		g.clones = map[string]CloneScript{}
	}
	g.clones[url] = s
}

// Clone refuses what the real runner refuses (a relative or unclean
// target, a missing parent, an existing target), then plays the URL's
// script on a fake terminal.
func (g *Git) Clone(ctx context.Context, req hub.CloneRequest) (hub.CloneRun, error) {
	if err := g.begin(GitClone); err != nil {
		return nil, err
	}
	if !path.IsAbs(req.Target) || path.Clean(req.Target) != req.Target || req.Target == "/" {
		return nil, hub.Errorf(hub.Invalid, "the clone's folder must be a clean absolute path")
	}
	if _, err := g.directory(ctx, path.Dir(req.Target)); err != nil {
		return nil, err
	}
	if _, err := g.fs.Lstat(req.Target); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			return nil, hub.Errorf(hub.Conflict, "the clone's folder already exists")
		}
		return nil, hub.Wrap(hub.Internal, err, "folder could not be inspected")
	}
	if req.URL == "" || strings.HasPrefix(req.URL, "-") {
		return nil, hub.Errorf(hub.Invalid, "git refuses this clone")
	}
	g.mu.Lock()
	s, ok := g.clones[req.URL]
	g.mu.Unlock()
	if !ok {
		s = CloneScript{Output: []string{"Cloning into '" + path.Base(req.Target) + "'...\r\n"}}
	}
	pr, pw := io.Pipe()
	c := &fakeClone{g: g, target: req.Target, script: s, out: pr, w: pw,
		input: make(chan string, 16), killed: make(chan struct{}), done: make(chan struct{})}
	go c.play()
	return c, nil
}

// fakeClone is a scripted clone's terminal and process.
type fakeClone struct {
	g      *Git
	target string
	script CloneScript
	out    *io.PipeReader
	w      *io.PipeWriter

	mu      sync.Mutex
	partial bytes.Buffer // typed input not yet ended by a line feed
	input   chan string  // whole lines typed

	killOnce sync.Once
	killed   chan struct{}
	done     chan struct{}
	err      error
}

// play runs the script and closes the output when the clone ends.
func (c *fakeClone) play() {
	defer close(c.done)
	end := func(err error) {
		c.err = err
		c.w.Close()
	}
	write := func(s string) bool {
		written := make(chan struct{})
		go func() {
			defer close(written)
			_, _ = c.w.Write([]byte(s))
		}()
		select {
		case <-written:
			return true
		case <-c.killed:
			return false
		}
	}
	killed := func() { end(hub.Errorf(hub.Unavailable, "git clone was killed by signal 15 (terminated)")) }
	for _, chunk := range c.script.Output {
		if !write(chunk) {
			killed()
			return
		}
	}
	answer := ""
	for i, p := range c.script.Prompts {
		if !write(strings.ReplaceAll(p, "{answer}", answer)) {
			killed()
			return
		}
		select {
		case answer = <-c.input:
		case <-c.killed:
			killed()
			return
		}
		if i < len(c.script.Answers) && answer != c.script.Answers[i] {
			write("\r\nfatal: Authentication failed\r\n")
			end(hub.Errorf(hub.Unavailable, "git clone failed with exit status 128"))
			return
		}
	}
	if c.script.Stall {
		<-c.killed
		killed()
		return
	}
	if c.script.Exit != 0 {
		end(hub.Errorf(hub.Unavailable, "git clone failed with exit status %d", c.script.Exit))
		return
	}
	if err := c.makeRepository(); err != nil {
		end(hub.Wrap(hub.Unavailable, err, "git clone failed with exit status 128"))
		return
	}
	end(nil)
}

// makeRepository makes the target a repository on branch "main".
func (c *fakeClone) makeRepository() error {
	if err := c.g.fs.Mkdir(c.target); err != nil {
		return err
	}
	if err := c.g.fs.Mkdir(path.Join(c.target, ".git")); err != nil {
		return err
	}
	c.g.SetBranch(c.target, "main")
	return nil
}

// Read reads the scripted output; io.EOF once the clone ended.
func (c *fakeClone) Read(p []byte) (int, error) { return c.out.Read(p) }

// Write types into the terminal: each line feed hands a line to the
// prompt waiting (or the next one).
func (c *fakeClone) Write(p []byte) (int, error) {
	select {
	case <-c.done:
		return 0, errors.New("the command has ended")
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range p {
		if b != '\n' && b != '\r' {
			c.partial.WriteByte(b)
			continue
		}
		select {
		case c.input <- c.partial.String():
		default:
			return 0, errors.New("fakes.Git: too many lines typed ahead")
		}
		c.partial.Reset()
	}
	return len(p), nil
}

// Wait waits for the script's end.
func (c *fakeClone) Wait() error {
	<-c.done
	return c.err
}

// Kill ends the script wherever it is and returns once it ended.
func (c *fakeClone) Kill() error {
	c.killOnce.Do(func() { close(c.killed) })
	<-c.done
	return nil
}
