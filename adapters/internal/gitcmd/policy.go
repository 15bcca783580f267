package gitcmd

import (
	"fmt"
	"strings"
)

// keptKeys are the only settings of a repository's own config (its config
// file, and config.worktree where extensions.worktreeConfig turns it on)
// that reach git: "section.name" for a key without subsection,
// "section.*.name" for that name under any subsection, "section.*" for
// every key of a section without subsection. Every other setting is
// dropped, so git falls back on the user's own value or its default.
//
// The list is short on purpose: it keeps what decides how git reads the
// repository (its format and extensions, how work tree files compare with
// the index) and how it names and tracks branches, and nothing that names
// a program, a file to include or a URL rewrite. An allow-list, not a list
// of dangerous keys, because git keeps adding keys that run programs
// (core.fsmonitor, gpg.ssh.defaultKeyCommand, ...) and the Hub runs
// whatever git the host has. A family that needs another key adds it here,
// after checking in git's documentation that no value of it runs anything.
var keptKeys = []string{
	// How the repository is stored: git must see every extension, or it
	// would misread a repository it ought to refuse.
	"core.repositoryformatversion", "extensions.*", "core.sharedrepository",
	"core.logallrefupdates", "core.commitgraph", "core.multipackindex",
	// How work tree files compare with the index.
	"core.filemode", "core.symlinks", "core.ignorecase", "core.precomposeunicode",
	"core.protecthfs", "core.protectntfs", "core.autocrlf", "core.eol", "core.safecrlf",
	"core.checkroundtripencoding", "core.checkstat", "core.trustctime",
	"core.untrackedcache", "core.splitindex", "core.sparsecheckout", "core.sparsecheckoutcone",
	"core.bigfilethreshold", "index.*", "feature.*",
	// How answers are shaped.
	"core.abbrev", "i18n.commitencoding", "i18n.logoutputencoding",
	"diff.renames", "diff.renamelimit", "diff.algorithm", "diff.*.binary",
	"status.showuntrackedfiles", "status.renames", "status.renamelimit", "status.aheadbehind",
	// Branches and their remotes (upstream, ahead and behind). A URL is
	// kept: protocol.ext.allow=never (fixedConfig) stops one naming a
	// command.
	"branch.*.remote", "branch.*.merge", "branch.*.pushremote",
	"remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push",
	"remote.*.promisor", "remote.*.partialclonefilter", "remote.*.tagopt", "remote.*.mirror",
	"user.name", "user.email",
}

var kept = func() map[string]bool {
	m := make(map[string]bool, len(keptKeys))
	for _, k := range keptKeys {
		m[k] = true
	}
	return m
}()

// keep reports whether a repository setting reaches git (see keptKeys).
func keep(s configEntry) bool {
	section, _, name, hasSub := s.parts()
	if section == "" {
		return false
	}
	if hasSub {
		return kept[section+".*."+name]
	}
	return kept[section+"."+name] || kept[section+".*"]
}

// fixedConfig is set on every command, after Options.Config, so nothing
// overrides it: it keeps git out of submodules, whose own config gitcmd
// never reads (git would run them with it), and refuses the ext::
// transport, whose URL is a command line, whoever configured the URL.
var fixedConfig = []Setting{
	{"submodule.recurse", "false"},
	{"status.submoduleSummary", "false"},
	{"diff.submodule", "short"},
	{"diff.ignoreSubmodules", "dirty"},
	{"fetch.recurseSubmodules", "false"},
	{"push.recurseSubmodules", "no"},
	{"protocol.ext.allow", "never"},
}

// submoduleGuard is given to the commands that look into submodules'
// work trees by default, right after the command's name. Configuration
// cannot say it: a submodule's ignore setting (.gitmodules is a work tree
// file) overrides diff.ignoreSubmodules, while the command line overrides
// both. "dirty" still reports a submodule whose commit moved, from its
// refs, without running git in it.
const submoduleGuard = "--ignore-submodules=dirty"

var guarded = map[string]bool{"status": true, "diff": true, "diff-files": true, "diff-index": true}

// outsideCommands are the commands Run takes: they need no repository or
// make one. `init` re-initializing an existing repository reads its
// config, and runs nothing any key names (TestNoProgramRuns shows it on
// the git at hand).
var outsideCommands = map[string]bool{"init": true, "version": true}

// checkArgs refuses a command line gitcmd cannot vouch for: no command
// name first, or an option before "--" that would take git into
// submodules with their own config.
func checkArgs(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("%w: a command name must come first", ErrRefused)
	}
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "--recurse-submodules") || strings.HasPrefix(a, "--submodule") ||
			strings.HasPrefix(a, "--ignore-submodules") && a != "--ignore-submodules=dirty" && a != "--ignore-submodules=all" {
			return fmt.Errorf("%w: %s would run git in submodules with their own config", ErrRefused, a)
		}
	}
	return nil
}

// withGuard returns args with submoduleGuard after the command name when
// the command needs it.
func withGuard(args []string) []string {
	if !guarded[args[0]] {
		return args
	}
	out := make([]string, 0, len(args)+1)
	return append(append(append(out, args[0]), submoduleGuard), args[1:]...)
}

// globalArgs are the global options Options.Args may hold: none of them
// chooses a repository, a work tree or a setting (those are gitcmd's
// business; settings go in Options.Config).
var globalArgs = map[string]bool{
	"--no-optional-locks": true, "--literal-pathspecs": true, "--glob-pathspecs": true,
	"--noglob-pathspecs": true, "--icase-pathspecs": true, "--no-pager": true,
	"--no-replace-objects": true,
}
