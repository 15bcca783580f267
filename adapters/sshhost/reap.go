package sshhost

import (
	"context"
	"path"
	"path/filepath"
	"strings"
)

// reapScript ends the sessions in the runtime folder $1 whose names do
// not follow it, and removes what they left (pid file, socket,
// credentials folder), printing each name. A session's leader is killed
// (as its group) only when /proc shows it still serves that session's
// socket: a pid of a session long gone may be another program's now. On
// a system without /proc, a live pid cannot be told apart, so it is left
// and its name printed with "?".
const reapScript = `rt="$1"; shift
for f in "$rt"/*.pid; do
  [ -f "$f" ] || continue
  n=$(basename "$f" .pid)
  keep=0
  for k in "$@"; do [ "$k" = "$n" ] && keep=1; done
  [ "$keep" = 1 ] && continue
  p=$(cat "$f")
  s="$rt/$n.sock"
  case "$p" in ''|*[!0-9]*) p=0 ;; esac
  if [ -d /proc/self ]; then
    if [ "$p" -gt 1 ] && [ -r "/proc/$p/cmdline" ] && tr '\0' '\n' < "/proc/$p/cmdline" | grep -qxF -- "$s"; then
      kill -s KILL -- "-$p" 2>/dev/null
    fi
  elif [ "$p" -gt 1 ] && kill -0 "$p" 2>/dev/null; then
    echo "?$n"; continue
  fi
  rm -rf -- "$f" "$s" "$rt/$n"
  echo "$n"
done`

// Reap ends every session on the host that this Host did not start
// (none of its running sessions), and removes what they left: what a
// Hub that died, or lost its connection while the host kept running,
// left behind. A restarted Hub calls it once per host before it starts
// sessions there. It returns the names (hashes) of the sessions it
// reaped.
func (h *Host) Reap(ctx context.Context) ([]string, error) {
	r, err := h.connect(ctx)
	if err != nil {
		return nil, err
	}
	args := []string{path.Join(r.root, "run")}
	h.mu.Lock()
	for sock := range h.sessions {
		args = append(args, strings.TrimSuffix(filepath.Base(sock), ".sock"))
	}
	h.mu.Unlock()
	var out, stderr boundedBuffer
	cmd := h.remoteCommand(ctx, reapScript, args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, h.remoteFailure(ctx, err, stderr.String(), "the host's sessions could not be reaped")
	}
	var reaped []string
	for _, n := range strings.Fields(out.String()) {
		if name, unsure := strings.CutPrefix(n, "?"); unsure {
			h.log.Warn("a session left on the host could not be identified; it was left running", "session", name)
			continue
		}
		reaped = append(reaped, n)
	}
	if len(reaped) > 0 {
		h.log.Info("reaped sessions left on the host", "sessions", reaped)
	}
	return reaped, nil
}
