package sshhost

// The scripts a session runs on the host, in /bin/sh, each given its
// arguments as positional parameters (remoteLine), each one quoted word
// and never shell text: nothing a repository or a workspace names is ever
// run.

// startScript starts a session on the host in one round trip: $1 is the
// private runtime folder, $2 the session's name there, $3 the workspace
// folder, $4 its data folder, $5 its socket, $6 the names of the login's
// variables the session keeps (space-separated; LC_* are kept too); the
// command follows. It first unsets every other variable of the login's
// environment (as the local backend starts its child from
// credenv.AgentEnv): the host's ambient tokens, proxies and sockets never
// reach the session. (The names are read from the shell's own `export
// -p`, without a program of its own: each line's name before its '=';
// a value spanning lines can only add names to unset.) From
// stdin (read takes no byte past a line; head -c no byte past its count,
// and nothing follows the tar until the script has said it unpacked it) it
// reads the session's variables (projection.preamble: NAME=value lines, and
// PATH+=dir to put dir first on PATH, up to an empty line), then the
// size of the credentials folder's tar and the tar, which it unpacks into
// a fresh private folder. It says "wharf-unpacked" and waits for "go":
// meanwhile the Hub forwards the folder's sockets there. It then starts
// the child as the leader of a new session and process group (setsid;
// stdin passed through fd 3, since sh gives a background command
// /dev/null as its stdin before any redirection of its own), and prints
// the child's pid, which names the group a forced stop kills. Once the
// child exits, the shell kills what it left in its group (as the local
// backend does) and removes the socket, pid file and credentials folder,
// so an orderly end, and a forced one, cost no further round trip; the
// pid file goes last. A session of the same workspace still running there
// (let go, of another build, which the Hub did not adopt) is killed first,
// and its script given up to 5 s to clean up, so that clean-up never
// removes what this start makes.
// Without setsid (not Linux) the child stays in the shell's group.
const startScript = `umask 077
rt="$1"; n="$2"; dir="$3"; data="$4"; sock="$5"; keep=" $6 "; shift 6
set -f; ifs=$IFS; IFS='
'
for v in $(export -p); do
  v=${v#export }; v=${v#declare -x }; v=${v%%=*}
  case "$v" in ''|[0-9]*|*[!A-Za-z0-9_]*) continue ;; esac
  case "$keep" in *" $v "*) continue ;; esac
  case "$v" in LC_*) continue ;; esac
  unset "$v" 2>/dev/null
done
IFS=$ifs; set +f
while IFS= read -r line && [ -n "$line" ]; do
  case "$line" in
    PATH+=*) PATH="${line#PATH+=}:$PATH"; export PATH ;;
    [A-Za-z_]*=*) export "$line" || exit 68 ;;
    *) exit 68 ;;
  esac
done
IFS= read -r size || exit 68
case "$size" in ''|*[!0-9]*) exit 68 ;; esac
if [ -f "$rt/$n.pid" ]; then
  o=$(cat -- "$rt/$n.pid")
  case "$o" in ''|*[!0-9]*) o=0 ;; esac
  if [ "$o" -gt 1 ] && [ -r "/proc/$o/cmdline" ] && tr '\0' '\n' < "/proc/$o/cmdline" | grep -qxF -- "$sock"; then
    kill -s KILL -- "-$o" 2>/dev/null
    i=0
    while [ -f "$rt/$n.pid" ] && [ "$i" -lt 5 ]; do sleep 1; i=$((i+1)); done
  fi
fi
[ -d "$dir" ] || exit 66
mkdir -p "$rt" "$data" && chmod 0700 "$rt" "$data" || exit 67
rm -rf -- "$rt/$n" && mkdir -- "$rt/$n" || exit 67
head -c "$size" | tar -x -f - -C "$rt/$n" || { rm -rf -- "$rt/$n"; exit 67; }
echo wharf-unpacked
IFS= read -r go && [ "$go" = go ] || { rm -rf -- "$rt/$n"; exit 69; }
exec 3<&0
if command -v setsid >/dev/null 2>&1; then
  setsid "$@" <&3 3<&- &
else
  "$@" <&3 3<&- &
fi
exec 3<&-
c=$!
echo "$c" > "$rt/$n.pid"
printf 'wharf-pid %s\n' "$c"
wait "$c"
rc=$?
kill -s KILL -- "-$c" 2>/dev/null
rm -rf -- "$sock" "$rt/$n"
rm -f -- "$rt/$n.pid"
exit $rc`

// Exit statuses of startScript's own refusals.
const (
	exitNoFolder     = 66
	exitNoRuntime    = 67
	exitBadVariables = 68
	exitNoGo         = 69
)

// killScript sends signal $3 (KILL, TERM) to the group $1 on the host
// (or the process, when it leads none: no setsid there), unless its
// leader is (on a system with /proc) no longer the session serving socket
// $2: the pid may have been reused once the session ended.
const killScript = `p="$1"
if [ -r "/proc/$p/cmdline" ]; then
  tr '\0' '\n' < "/proc/$p/cmdline" | grep -qxF -- "$2" || exit 0
fi
kill -s "$3" -- "-$p" 2>/dev/null || kill -s "$3" "$p" 2>/dev/null || [ ! -d "/proc/$p" ]`

// adoptScript prints "wharf-pid P" when the pid file $1 names a running
// session (P) of the binary $2 serving socket $3 for workspace $4: its
// command line on /proc says so. It exits 3 when there is none (no pid
// file, the process gone, another program, a system without /proc) and
// 4 when the session runs another binary: another build's, which this
// Hub does not adopt.
const adoptScript = `p=$(cat -- "$1" 2>/dev/null)
case "$p" in ''|*[!0-9]*) exit 3 ;; esac
[ -r "/proc/$p/cmdline" ] || exit 3
c=$(tr '\0' '\n' < "/proc/$p/cmdline")
printf '%s\n' "$c" | grep -qxF -- "$3" || exit 3
printf '%s\n' "$c" | grep -qxF -- "$4" || exit 3
[ "$(printf '%s\n' "$c" | head -n 1)" = "$2" ] || exit 4
printf 'wharf-pid %s\n' "$p"`

// cleanScript removes a session's leftovers on the host: its socket,
// pid file and credentials folder ($@).
const cleanScript = `rm -rf -- "$@"`

// goneScript waits, up to 10 s, until the pid file $1 is gone: the start
// script removes it last, once the child has exited and its clean-up is
// done.
const goneScript = `i=0
while [ -f "$1" ] && [ "$i" -lt 100 ]; do sleep 0.1 2>/dev/null || sleep 1; i=$((i+1)); done
[ ! -f "$1" ]`
