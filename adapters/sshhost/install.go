package sshhost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/hub"
)

// This file learns what the host is and puts the binary there.

// probeScript prints the host's system, machine and home, one a line.
const probeScript = `uname -s && uname -m && printf '%s\n' "$HOME"`

// probe learns the host's system and home over the master, refuses a host
// the Hub's binary cannot run on, and resolves RemoteRoot.
func (h *Host) probe(ctx context.Context) (*remote, error) {
	var stdout, stderr boundedBuffer
	cmd := h.remoteCommand(ctx, probeScript)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if exitStatus(err) == sshExitFailure {
			return nil, h.connectFailure(err, stderr.String())
		}
		h.log.Warn("the host's system could not be learned", "err", err, "stderr", strings.TrimSpace(stderr.String()))
		return nil, hub.Wrap(hub.Unavailable, err, fmt.Sprintf("host %s: its system could not be learned (uname failed)", h.opts.Name))
	}
	lines := strings.Split(strings.TrimRight(stdout.String(), "\n"), "\n")
	if len(lines) != 3 {
		return nil, hub.Errorf(hub.Unavailable, "host %s: its system could not be learned", h.opts.Name)
	}
	goos, goarch := systemOf(lines[0]), machineOf(lines[1])
	if goos != h.goos || goarch != h.goarch {
		return nil, hub.Errorf(hub.Unavailable,
			"host %s runs %s/%s, and this Hub is built for %s/%s: its sessions cannot run there "+
				"(run a Hub built for the same system, or use a host like the Hub's)",
			h.opts.Name, printable(lines[0]), printable(lines[1]), h.goos, h.goarch)
	}
	root := h.opts.RemoteRoot
	if !path.IsAbs(root) {
		home := lines[2]
		if !path.IsAbs(home) {
			return nil, hub.Errorf(hub.Unavailable, "host %s: the remote user has no home directory; set an absolute remote root", h.opts.Name)
		}
		root = path.Join(home, root)
	}
	root = path.Clean(root)
	if strings.ContainsAny(root, ":\n") {
		return nil, hub.Errorf(hub.Unavailable, "host %s: the remote directory %s holds ':' or a line break, which ssh's forwards cannot name", h.opts.Name, printable(root))
	}
	limit := 103 // sun_path on the BSDs and macOS
	if goos == "linux" {
		limit = 107
	}
	if n := len(path.Join(root, "run")) + 1 + hashLen + 1 + len(credenv.LongestSocketName); n > limit {
		return nil, hub.Errorf(hub.Unavailable, "host %s: the remote directory %s is too long for Unix sockets "+
			"(%d bytes of at most %d); choose a shorter remote root", h.opts.Name, printable(root), n, limit)
	}
	return &remote{root: root}, nil
}

// systemOf is the GOOS of `uname -s`.
func systemOf(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "linux", "darwin", "freebsd", "openbsd", "netbsd", "dragonfly":
		return s
	}
	return "?" + s
}

// machineOf is the GOARCH of `uname -m`.
func machineOf(m string) string {
	switch m = strings.TrimSpace(m); m {
	case "x86_64", "amd64":
		return "amd64"
	case "aarch64", "arm64":
		return "arm64"
	case "i386", "i486", "i586", "i686", "i86pc":
		return "386"
	case "armv6l", "armv7l", "armv7", "arm":
		return "arm"
	case "riscv64", "ppc64le", "ppc64", "s390x", "mips64", "mips64le":
		return m
	case "loongarch64":
		return "loong64"
	}
	return "?" + m
}

// printable bounds s and drops what a terminal or a log could misread.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return s
}

// checkScript prints "present" when the binary $1 is there with the
// SHA-256 $2, "absent" otherwise.
const checkScript = `b="$1"
if [ -f "$b" ] && [ -x "$b" ]; then
  got=$( (sha256sum "$b" 2>/dev/null || shasum -a 256 "$b") | cut -d' ' -f1)
  if [ "$got" = "$2" ]; then echo present; exit 0; fi
fi
echo absent`

// copyScript writes stdin to a fresh file beside $1, checks its SHA-256
// against $2, makes it executable by its owner only and renames it to
// $1. Folders are made private (umask 077); a failure leaves nothing.
const copyScript = `set -e
umask 077
b="$1"; d=$(dirname "$b")
mkdir -p "$d"
t="$d/.wharf.$$"
trap 'rm -f "$t"' EXIT
cat > "$t"
got=$( (sha256sum "$t" 2>/dev/null || shasum -a 256 "$t") | cut -d' ' -f1)
if [ "$got" != "$2" ]; then echo "wharf: the copied binary's hash is $got, not $2" >&2; exit 3; fi
chmod 0700 "$t"
mv -f "$t" "$b"
trap - EXIT`

// install puts the binary on the host, once per connection: when the
// same hash is there already it is reused, else it is copied.
func (h *Host) install(ctx context.Context, r *remote) (string, error) {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	if r.installed != "" {
		return r.installed, nil
	}
	sum, err := fileHash(h.opts.Binary)
	if err != nil {
		h.log.Error("the binary to copy could not be read", "err", err)
		return "", hub.Wrap(hub.Internal, err, "the Hub's executable could not be read")
	}
	bin := path.Join(r.root, "bin", sum, "wharf")
	var out, stderr boundedBuffer
	cmd := h.remoteCommand(ctx, checkScript, bin, sum)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", h.remoteFailure(ctx, err, stderr.String(), "the Hub's executable could not be checked on the host")
	}
	if strings.TrimSpace(out.String()) != "present" {
		if err := h.copyBinary(ctx, bin, sum); err != nil {
			return "", err
		}
	}
	r.installed = bin
	return bin, nil
}

// copyBinary streams the binary to bin on the host.
func (h *Host) copyBinary(ctx context.Context, bin, sum string) error {
	f, err := os.Open(h.opts.Binary)
	if err != nil {
		return hub.Wrap(hub.Internal, err, "the Hub's executable could not be read")
	}
	defer f.Close()
	var stderr boundedBuffer
	cmd := h.remoteCommand(ctx, copyScript, bin, sum)
	cmd.Stdin, cmd.Stderr = f, &stderr
	if err := cmd.Run(); err != nil {
		return h.remoteFailure(ctx, err, stderr.String(), "the Hub's executable could not be copied to the host")
	}
	h.copies.Add(1)
	h.log.Info("copied the Hub's executable to the host", "path", bin)
	return nil
}

// remoteFailure is the error of a remote command that failed: ssh's own
// failure (the connection), the context's end, or the command's (msg).
func (h *Host) remoteFailure(ctx context.Context, err error, stderr, msg string) error {
	switch {
	case ctx.Err() != nil:
		return hub.Wrap(hub.Unavailable, ctx.Err(), fmt.Sprintf("host %s: %s in time", h.opts.Name, strings.TrimSuffix(msg, ".")))
	case exitStatus(err) == sshExitFailure:
		return h.connectFailure(err, stderr)
	}
	h.log.Warn(msg, "err", err, "stderr", strings.TrimSpace(stderr))
	return hub.Wrap(hub.Internal, err, fmt.Sprintf("host %s: %s", h.opts.Name, msg))
}

// hashes caches file hashes by path, size and modification time: the
// binary is tens of megabytes, and every Host of a Hub copies the same.
var hashes sync.Map // hashKey -> string

type hashKey struct {
	path  string
	size  int64
	mtime int64
}

// fileHash is the hex SHA-256 of the file at p.
func fileHash(p string) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	key := hashKey{p, fi.Size(), fi.ModTime().UnixNano()}
	if v, ok := hashes.Load(key); ok {
		return v.(string), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	hs := sha256.New()
	if _, err := io.Copy(hs, f); err != nil {
		return "", err
	}
	sum := hex.EncodeToString(hs.Sum(nil))
	hashes.Store(key, sum)
	return sum, nil
}

// remoteSocket is the remote socket of the session named hash, under the
// host's root.
func remoteSocket(root, hash string) string { return path.Join(root, "run", hash+".sock") }
