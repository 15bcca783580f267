package sqlite

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// generation counts the commits made to one database by every Store that
// opens it, in any process, so each can tell when another has written
// (hub.Store.ExternalGeneration) without reading the database: the Hub
// checks it on every request.
//
// The count is an 8-byte word in a file beside the database (`-gen`,
// mode 0600), mapped shared into every process that opens it, so an
// increment is visible to all of them at once, with no system call.
// (SQLite's WAL mode already relies on a shared mapping the same way,
// for its -shm file.) Each Store also counts its own increments; the
// difference is what others committed.
type generation struct {
	f    *os.File
	mem  []byte         // the mapping; 8 bytes
	word *atomic.Uint64 // inside mem
	own  atomic.Uint64  // increments made by this Store
}

// openGeneration maps the counter file of the database at dbPath,
// creating it when missing.
func openGeneration(dbPath string) (*generation, error) {
	name := dbPath + "-gen"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open commit counter: %w", err)
	}
	fail := func(err error) (*generation, error) {
		f.Close()
		return nil, fmt.Errorf("commit counter %s: %w", name, err)
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	if fi.Size() < 8 {
		// Growing to 8 bytes is the same act from any process, so two
		// first opens cannot disagree; the new bytes read as zero.
		if err := f.Truncate(8); err != nil {
			return fail(err)
		}
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, 8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail(err)
	}
	g := &generation{f: f, mem: mem, word: (*atomic.Uint64)(unsafe.Pointer(&mem[0]))}
	return g, nil
}

// committed records one commit of this Store. The shared word moves
// first and the own count after, so external never counts one of our
// own commits as another's.
func (g *generation) committed() {
	g.word.Add(1)
	g.own.Add(1)
}

// external returns the commits of other Stores. A read that raced our own
// commit is retried, so the result never falls below the true count; it
// may briefly exceed it, which only costs the caller a needless reload.
func (g *generation) external() uint64 {
	for {
		before := g.own.Load()
		all := g.word.Load()
		if g.own.Load() == before {
			return all - before
		}
	}
}

// release unmaps and closes the counter.
func (g *generation) release() error {
	err := unix.Munmap(g.mem)
	if cerr := g.f.Close(); err == nil {
		err = cerr
	}
	return err
}
