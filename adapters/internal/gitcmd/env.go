package gitcmd

import "strings"

// Env returns the environment of a git command built from base: without
// any GIT_* variable (GIT_DIR, GIT_WORK_TREE, GIT_CONFIG_* and friends
// would redirect or reconfigure git behind the caller's back) nor locale
// variable (LC_ALL, LANG, LANGUAGE), then with the locale pinned to C, so
// git's behaviour does not depend on the host's language, and terminal
// prompts off, so git fails rather than wait for a user who is not there.
// Other variables keep their order; HOME and XDG_CONFIG_HOME pass, so the
// user's own git config applies, unless isolate also sets
// GIT_CONFIG_NOSYSTEM=1 and GIT_CONFIG_GLOBAL=/dev/null, which leave only
// the repository's own config (and -c options). Isolation concerns config
// files only: the default excludes and attributes files under
// XDG_CONFIG_HOME still apply.
func Env(base []string, isolate bool) []string {
	env := make([]string, 0, len(base)+5)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "LC_ALL" || k == "LANG" || k == "LANGUAGE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "LC_ALL=C", "LANG=C", "GIT_TERMINAL_PROMPT=0")
	if isolate {
		env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	}
	return env
}
