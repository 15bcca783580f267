package docfeed

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"
)

// sniffBytes is how much of a file decides between text and binary.
const sniffBytes = 8 << 10

// classifyWorkers bounds the files stat'ed and read at once: enough to hide
// disk latency, few enough not to starve the descriptor table or the
// process serving clients.
const classifyWorkers = 8

// kindByName returns the kind a file's name decides (markdown, asciidoc),
// or "" when its content must be sniffed. Extensions compare without case.
func kindByName(name string) Kind {
	switch strings.ToLower(path.Ext(name)) {
	case ".md", ".markdown", ".mdown", ".mkd":
		return KindMarkdown
	case ".adoc", ".asciidoc", ".asc":
		return KindAsciiDoc
	}
	return ""
}

// sniffKind reads the first sniffBytes of the regular file at abs: text
// when they are valid UTF-8 without NUL (a rune cut by the limit still
// counts as valid), binary otherwise. The open never follows a symbolic
// link and never blocks on a FIFO swapped in after the caller's lstat; a
// file that is no longer regular is reported as errNotRegular. Errors
// never carry content, only the path's failure.
func sniffKind(abs string) (Kind, error) {
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return "", errNotRegular
		}
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", errNotRegular
	}
	var buf [sniffBytes]byte
	n, err := io.ReadFull(f, buf[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", err
	}
	if looksText(buf[:n], n == sniffBytes) {
		return KindText, nil
	}
	return KindBinary, nil
}

// looksText reports UTF-8 without NUL. When the sample was cut short
// (truncated), up to three trailing bytes that begin an incomplete rune
// are forgiven.
func looksText(b []byte, truncated bool) bool {
	if truncated {
		for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
			if utf8.RuneStart(b[len(b)-i]) {
				if !utf8.FullRune(b[len(b)-i:]) {
					b = b[:len(b)-i]
				}
				break
			}
		}
	}
	for _, c := range b {
		if c == 0 {
			return false
		}
	}
	return utf8.Valid(b)
}

// errNotRegular marks a path that is not (or no longer) a regular file.
var errNotRegular = errors.New("not a regular file")

// fileStat is what the index remembers of a file to tell a change from a
// repeated event.
type fileStat struct {
	size  int64
	mtime int64 // nanoseconds
	ino   uint64
}

func statOf(fi fs.FileInfo) fileStat {
	st := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}

// probe is one file to classify; classifyAll fills kind, stat and ok.
type probe struct {
	rel  string
	abs  string
	stat fileStat
	kind Kind
	// reuse, when set, is a known entry whose kind stands if the stat is
	// unchanged (a re-index need not read every file again).
	reuse *entry
	ok    bool // a regular file, classified
}

// classifyAll lstats and classifies probes with classifyWorkers goroutines,
// all of which have returned when it does. A probe that is missing or not
// a regular file stays !ok: for the index it does not exist. An unreadable
// one is binary. When ctx ends, the probes not yet started stay !ok and
// the error is ctx's: callers must not use a partial result.
func classifyAll(ctx context.Context, probes []probe) error {
	if len(probes) == 0 {
		return ctx.Err()
	}
	workers := min(classifyWorkers, len(probes))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				classify(&probes[i])
			}
		})
	}
	defer func() {
		close(next)
		wg.Wait()
	}()
	for i := range probes {
		select {
		case next <- i:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func classify(p *probe) {
	fi, err := os.Lstat(p.abs)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	p.stat = statOf(fi)
	if p.reuse != nil && p.reuse.stat == p.stat {
		p.kind, p.ok = p.reuse.meta.Kind, true
		return
	}
	if k := kindByName(fi.Name()); k != "" {
		p.kind, p.ok = k, true
		return
	}
	k, err := sniffKind(p.abs)
	switch {
	case errors.Is(err, errNotRegular) || errors.Is(err, fs.ErrNotExist):
		return
	case err != nil:
		// It exists but cannot be read (permissions, I/O): list it, as
		// nothing of it can be shown.
		k = KindBinary
	}
	p.kind, p.ok = k, true
}
