package gitcmd

import (
	"bytes"
	"context"
	"fmt"
)

// Entry is one setting as git lists it: Key is the full name (section
// and name lower case, a subsection as written), Bare a name given
// without "=", which git reads as true.
type Entry struct {
	Key, Value string
	Bare       bool
}

// UserConfig reads the settings of the system's and the user's global
// git config, as git itself resolves them (include and includeIf
// followed), in git's order: the system's first. No repository's config
// is read: git runs outside any (GIT_DIR=/dev/null), and only the
// "system" and "global" scopes are kept, so neither Options.Config nor
// fixedConfig is in the answer. It runs `git config --list` bounded as
// every command is (Options.Timeout, Options.MaxStdout); with
// IsolateConfig it answers nothing. A listing it cannot read whole is an
// *Error wrapping ErrUnexpectedOutput.
func (r *Runner) UserConfig(ctx context.Context) ([]Entry, error) {
	args := []string{"config", "--list", "--includes", "--show-scope", "-z"}
	res, err := r.run(ctx, "", args, []string{"GIT_DIR=/dev/null"})
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, &Error{Args: args, Code: res.Code, Stderr: res.Stderr, Err: fmt.Errorf("%w: exit status %d", ErrUnexpectedOutput, res.Code)}
	}
	out, err := ParseConfigList(res.Stdout)
	if err != nil {
		return nil, &Error{Args: args, Code: res.Code, Stderr: res.Stderr, Err: err}
	}
	return out, nil
}

// ParseConfigList reads the output of `git config --list --show-scope
// -z` (records "scope NUL key LF value NUL", or "scope NUL key NUL" for a
// bare key) and keeps the system's and global settings. A record that is
// not of that shape, or a key that is not "section.name" or
// "section.sub.name", fails the whole listing: the caller then uses none
// of it rather than a part.
func ParseConfigList(b []byte) ([]Entry, error) {
	var out []Entry
	for len(b) > 0 {
		scope, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			return nil, fmt.Errorf("%w: a config listing ends inside a record", ErrUnexpectedOutput)
		}
		rec, rest, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			return nil, fmt.Errorf("%w: a config listing ends inside a record", ErrUnexpectedOutput)
		}
		b = rest
		key, value, hasValue := bytes.Cut(rec, []byte{'\n'})
		e := Entry{Key: string(key), Value: string(value), Bare: !hasValue}
		if err := checkSetting(Setting{Key: e.Key}); err != nil || bytes.ContainsAny(key, " \t\r") {
			return nil, fmt.Errorf("%w: a config listing holds a malformed key", ErrUnexpectedOutput)
		}
		switch string(scope) {
		case "system", "global":
			out = append(out, e)
		case "local", "worktree", "command", "submodule", "unknown":
		default:
			return nil, fmt.Errorf("%w: a config listing names an unknown scope", ErrUnexpectedOutput)
		}
	}
	return out, nil
}

// FormatConfig writes entries as a config file git reads back as exactly
// these settings, in this order (every value quoted and escaped; a bare
// entry stays bare).
func FormatConfig(entries []Entry) []byte {
	in := make([]configEntry, len(entries))
	for i, e := range entries {
		in[i] = configEntry{key: e.Key, value: e.Value, bare: e.Bare}
	}
	return writeConfig(in)
}
