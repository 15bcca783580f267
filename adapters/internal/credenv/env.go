package credenv

import "strings"

// allowedEnv names the variables a child inherits from the base
// environment; LC_* variables are allowed too. Everything else stays with
// the Hub: tokens, WHARF_* settings, GIT_* overrides that would redirect
// the workspace's git, proxies and agent sockets. Credentials reach a
// session only through its own projection, never by inheritance.
var allowedEnv = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "TZ": true, "TERM": true, "TMPDIR": true,
}

// childEnv filters base down to the allowed variables, keeping their
// order. When a name repeats, the last value wins, as it would for
// exec.Cmd; entries without '=' are dropped.
func childEnv(base []string) []string {
	out := make([]string, 0, len(allowedEnv)+4)
	at := map[string]int{}
	for _, kv := range base {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || !(allowedEnv[name] || strings.HasPrefix(name, "LC_")) {
			continue
		}
		if i, seen := at[name]; seen {
			out[i] = kv
			continue
		}
		at[name] = len(out)
		out = append(out, kv)
	}
	return out
}
