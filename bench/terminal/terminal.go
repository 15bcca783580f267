package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/creack/pty"
)

// The two paths to a shell: through the Hub (a WebSocket) and direct (a
// PTY of this program's own). Each has one reader goroutine that hands
// the output over in chunks, so that waiting for output can end with a
// context without ending the connection (a cancelled Read of
// coder/websocket closes it).

// terminal is one path to a shell.
type terminal interface {
	name() string
	// write types s.
	write(ctx context.Context, s string) error
	// next returns the next chunk of output; an ended terminal is an
	// error.
	next(ctx context.Context) ([]byte, error)
	close()
}

// output is what a reader goroutine hands over: a chunk, or the end.
type output struct {
	b   []byte
	err error
}

// expect reads t's output until s has been read. Output before s is
// dropped; so is any after it in the same chunk, which is fine for one
// key's echo read before the next key is typed.
func expect(ctx context.Context, t terminal, s string) error {
	var seen []byte
	for !bytes.Contains(seen, []byte(s)) {
		b, err := t.next(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %q (read %q): %w", s, tail(seen), err)
		}
		seen = append(seen, b...)
		if len(seen) > 1<<16 {
			seen = seen[len(seen)-len(s):]
		}
	}
	return nil
}

func tail(b []byte) []byte { return b[max(0, len(b)-80):] }

// prepare waits for the shell to run a command, so its start-up output is
// read.
func prepare(ctx context.Context, t terminal) error {
	if err := t.write(ctx, "echo READY-$((40+2))\n"); err != nil {
		return err
	}
	return expect(ctx, t, "READY-42")
}

// catFile prints the file big.txt of the shell's folder, of size bytes,
// and returns how long its output took to arrive, to the end marker.
func catFile(ctx context.Context, t terminal, size int64) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	// The quotes keep the echo of the typed line from holding the marker.
	if err := t.write(ctx, "cat big.txt; echo CAT''DONE\n"); err != nil {
		return 0, err
	}
	const marker = "CATDONE"
	var got int64
	var last []byte
	for {
		b, err := t.next(ctx)
		if err != nil {
			return 0, fmt.Errorf("after %d bytes: %w", got, err)
		}
		got += int64(len(b))
		last = append(last, b...)
		if bytes.Contains(last, []byte(marker)) {
			break
		}
		last = last[max(0, len(last)-len(marker)):]
	}
	d := time.Since(t0)
	if got < size {
		return 0, fmt.Errorf("read %d bytes, fewer than the file's %d", got, size)
	}
	return d, nil
}

// writeBigFile writes big.txt into folder: size bytes of lower-case lines,
// which never hold the end marker.
func writeBigFile(folder string, size int64) error {
	f, err := os.Create(filepath.Join(folder, "big.txt"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz", 4)[:99] + "\n")
	for n := int64(0); n < size; n += int64(len(line)) {
		if _, err := w.Write(line[:min(int64(len(line)), size-n)]); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hubTerminal is a shell attached through the Hub.
type hubTerminal struct {
	conn *websocket.Conn
	out  chan output
	mu   sync.Mutex // orders writes: input and acks
}

func newHubTerminal(conn *websocket.Conn) *hubTerminal {
	conn.SetReadLimit(1 << 20)
	t := &hubTerminal{conn: conn, out: make(chan output, 64)}
	go t.read()
	return t
}

func (t *hubTerminal) name() string { return "the Hub" }

// read hands the output over and acknowledges each message once it is
// handed over, as the dashboard does once xterm.js has drawn it.
func (t *hubTerminal) read() {
	ctx := context.Background()
	var offset int64
	for {
		typ, b, err := t.conn.Read(ctx)
		if err != nil {
			t.out <- output{err: err}
			return
		}
		if typ == websocket.MessageText {
			var m struct {
				Type   string `json:"type"`
				Offset int64  `json:"offset"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.out <- output{err: fmt.Errorf("a text message that is no JSON: %w", err)}
				return
			}
			switch m.Type {
			case "hello":
				offset = m.Offset
			case "exit":
				t.out <- output{err: errors.New("the shell exited")}
				return
			}
			continue
		}
		offset += int64(len(b))
		t.out <- output{b: b}
		if err := t.send(ctx, map[string]any{"type": "ack", "offset": offset}); err != nil {
			t.out <- output{err: err}
			return
		}
	}
}

func (t *hubTerminal) send(ctx context.Context, m any) error {
	b, _ := json.Marshal(m)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.conn.Write(ctx, websocket.MessageText, b)
}

func (t *hubTerminal) write(ctx context.Context, s string) error {
	return t.send(ctx, map[string]string{"type": "input", "data": s})
}

func (t *hubTerminal) next(ctx context.Context) ([]byte, error) {
	select {
	case o := <-t.out:
		return o.b, o.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *hubTerminal) close() { t.conn.Close(websocket.StatusNormalClosure, "") }

// directTerminal is /bin/sh in a PTY of this program's own, in the
// workspace folder, with the environment a Wharf shell gets.
type directTerminal struct {
	cmd *exec.Cmd
	pty *os.File
	out chan output
}

func startDirect(folder string) (*directTerminal, error) {
	cmd := exec.Command("/bin/sh")
	cmd.Dir = folder
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 200, Rows: 50})
	if err != nil {
		return nil, err
	}
	t := &directTerminal{cmd: cmd, pty: f, out: make(chan output, 64)}
	go t.read()
	return t, nil
}

func (t *directTerminal) name() string { return "a direct PTY" }

func (t *directTerminal) read() {
	for {
		b := make([]byte, 32<<10)
		n, err := t.pty.Read(b)
		if n > 0 {
			t.out <- output{b: b[:n]}
		}
		if err != nil {
			t.out <- output{err: err}
			return
		}
	}
}

func (t *directTerminal) write(_ context.Context, s string) error {
	_, err := t.pty.WriteString(s)
	return err
}

func (t *directTerminal) next(ctx context.Context) ([]byte, error) {
	select {
	case o := <-t.out:
		return o.b, o.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (t *directTerminal) close() {
	t.cmd.Process.Kill()
	t.pty.Close()
	t.cmd.Wait()
}
