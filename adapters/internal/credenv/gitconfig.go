package credenv

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

// Bounds of reading the user's git config for a session.
const (
	userConfigTimeout = 2 * time.Second
	userConfigMax     = 256 << 10
)

// userGitConfig is the session's global git config: the settings of the
// Hub user's system and global config (read by git at gitPath, includes
// followed) that carry no credential, as one flat file. Any failure —
// no git, a timeout, a listing too large or malformed — gives an empty
// file and a log line: the session then runs with git's defaults rather
// than with a credential the filter did not see.
func userGitConfig(ctx context.Context, gitPath string, base []string, log *slog.Logger) []byte {
	if gitPath == "" {
		return nil
	}
	r := gitcmd.New(gitcmd.Options{Git: gitPath, Env: base, Timeout: userConfigTimeout, MaxStdout: userConfigMax})
	entries, err := r.UserConfig(ctx)
	if err != nil {
		log.Warn("the user's git config could not be read; the session gets none of it", "err", err)
		return nil
	}
	home, xdg := lookupEnv(base, "HOME"), lookupEnv(base, "XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	return gitcmd.FormatConfig(flattenUserConfig(entries, home, xdg))
}

// flattenUserConfig keeps the entries keepUserSetting allows, with `~/`
// in a path setting expanded against home (git in the session runs with
// a home of its own), and points the user's default ignore and
// attributes files (which git finds under its home's .config, or
// xdgConfig) at the user's, unless the config names them.
func flattenUserConfig(entries []gitcmd.Entry, home, xdgConfig string) []gitcmd.Entry {
	var out []gitcmd.Entry
	named := map[string]bool{}
	for _, e := range entries {
		if !keepUserSetting(e.Key) {
			continue
		}
		if pathKeys[e.Key] && home != "" {
			if rest, ok := strings.CutPrefix(e.Value, "~/"); ok {
				e.Value = filepath.Join(home, rest)
			}
		}
		named[e.Key] = true
		out = append(out, e)
	}
	if xdgConfig != "" {
		for _, d := range [...]struct{ key, file string }{{"core.attributesfile", "attributes"}, {"core.excludesfile", "ignore"}} {
			if !named[d.key] {
				out = append(out, gitcmd.Entry{Key: d.key, Value: filepath.Join(xdgConfig, "git", d.file)})
			}
		}
	}
	return out
}

// pathKeys are the kept settings whose value is a path git expands `~/`
// in.
var pathKeys = map[string]bool{
	"core.excludesfile": true, "core.attributesfile": true, "core.hookspath": true,
	"commit.template": true, "init.templatedir": true, "blame.ignorerevsfile": true,
	"mailmap.file": true, "http.sslcainfo": true, "http.sslcapath": true,
	"gpg.ssh.allowedsignersfile": true, "gpg.ssh.revocationfile": true,
}

// droppedSections are the sections of the user's config a session never
// gets: each can carry a credential (credential helpers, HTTP headers
// and client certificates, URL rewrites with user information, remotes,
// mail and SVN passwords), pull in a file the filter never saw
// (include, includeIf: git has already followed them), or sign with the
// user's own keys (gpg, but for the public files keptGPG lists).
var droppedSections = map[string]bool{
	"include": true, "includeif": true, "credential": true, "http": true, "imap": true,
	"remote": true, "sendemail": true, "submodule": true, "svn-remote": true, "url": true,
	"gpg": true, "lfs": true,
}

// droppedKeys are single settings a session never gets: a program that
// reaches hosts with its own credentials, or the user's signing key and
// signing defaults (the projection sets its own).
var droppedKeys = map[string]bool{
	"core.askpass": true, "core.gitproxy": true, "core.sshcommand": true,
	"user.signingkey": true, "commit.gpgsign": true, "tag.gpgsign": true,
	"tag.forcesignannotated": true, "push.gpgsign": true, "ssh.variant": true,
}

// keptSettings are settings of dropped sections that carry no credential
// and that git needs as the user set them: the certificates it trusts,
// and the public files that say whose signatures are good.
var keptSettings = map[string]bool{
	"http.sslcainfo": true, "http.sslcapath": true,
	"gpg.ssh.allowedsignersfile": true, "gpg.ssh.revocationfile": true, "gpg.mintrustlevel": true,
}

// droppedSuffixes end the names of settings that hold or name a secret,
// in any section (a tool's own section included).
var droppedSuffixes = []string{
	"askpass", "cookiefile", "extraheader", "password", "passwd", "proxy", "pushurl",
	"secret", "sslcert", "sslkey", "token", "url", "helper", "sshcommand",
}

// keepUserSetting reports whether a setting of the user's config (key as
// git lists it: section and name lower case) reaches the session. It is a
// deny-list, unlike gitcmd's allow-list for a repository's config: this
// config is the user's own and trusted, and the session should keep
// every habit it sets (identity, editor, aliases, diff and merge tools);
// what it must not carry is a credential, which lives under the names
// above.
func keepUserSetting(key string) bool {
	if keptSettings[key] {
		return true
	}
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first <= 0 {
		return false
	}
	section, name := key[:first], key[last+1:]
	if droppedSections[section] || droppedKeys[section+"."+name] {
		return false
	}
	for _, s := range droppedSuffixes {
		if strings.HasSuffix(name, s) {
			return false
		}
	}
	return true
}

// lookupEnv returns the last value of name in env, as exec would pass it.
func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
