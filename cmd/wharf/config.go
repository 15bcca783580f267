package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
)

// Configuration by environment. Every flag of `wharf serve` can also be
// set by an environment variable named after it: WHARF_ and the flag's
// name in capitals with '-' as '_' (--state-dir is WHARF_STATE_DIR). The
// rule is mechanical, so a new flag gets its variable with no list to keep
// up to date. A flag given on the command line wins over its variable; a
// variable set to the empty string counts as unset. A repeatable flag
// (--agent) takes one value per line of its variable.
//
// A service manager (systemd's Environment=, a container's env) is where
// variables come from in practice, so a mistake in one is reported naming
// the variable, not a flag the operator never typed.

// envName is the variable that sets the flag name.
func envName(flagName string) string {
	return "WHARF_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// origin says where a flag's effective value came from.
type origin string

const (
	fromDefault origin = "default"
	fromFlag    origin = "flag"
)

func fromEnv(name string) origin { return origin("env " + name) }

// parseWithEnv parses args into fs, then sets every flag that args did not
// name and that only allows (all flags when only is nil) from its
// environment variable. It returns where each flag's value came from.
// Errors are usage errors naming the flag or the variable.
func parseWithEnv(fs *flag.FlagSet, args []string, getenv func(string) string, repeatable, only []string) (map[string]origin, error) {
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	from := map[string]origin{}
	fs.VisitAll(func(f *flag.Flag) { from[f.Name] = fromDefault })
	fs.Visit(func(f *flag.Flag) { from[f.Name] = fromFlag })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || from[f.Name] == fromFlag || (only != nil && !slices.Contains(only, f.Name)) {
			return
		}
		v := getenv(envName(f.Name))
		if v == "" {
			return
		}
		values := []string{v}
		if slices.Contains(repeatable, f.Name) {
			values = nonEmptyLines(v)
		}
		for _, one := range values {
			if serr := fs.Set(f.Name, one); serr != nil {
				err = usagef("%s: $%s: invalid value for --%s: %v", strings.TrimPrefix(fs.Name(), "wharf "),
					envName(f.Name), f.Name, serr)
				return
			}
		}
		from[f.Name] = fromEnv(envName(f.Name))
	})
	return from, err
}

// parseAdmin parses the arguments of an administration command (wharf
// user, backup, restore): one optional operand, before or after the
// flags, and the flags, of which only --state-dir may come from its
// variable ($WHARF_STATE_DIR, as serve's). It returns the operand ("" when
// none) and any further arguments, which the caller refuses.
func parseAdmin(fs *flag.FlagSet, args []string, getenv func(string) string) (operand string, extra []string, err error) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		operand, args = args[0], args[1:]
	}
	if _, err := parseWithEnv(fs, args, getenv, nil, []string{"state-dir"}); err != nil {
		var ue usageError
		if errors.Is(err, flag.ErrHelp) || errors.As(err, &ue) {
			return "", nil, err
		}
		return "", nil, usageError{err}
	}
	extra = fs.Args()
	if operand == "" && len(extra) > 0 {
		operand, extra = extra[0], extra[1:]
	}
	return operand, extra, nil
}

// nonEmptyLines splits v at line ends, dropping blank lines.
func nonEmptyLines(v string) []string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// printConfig writes one line per flag of fs: its name, its effective
// value and where that came from. No flag of serve holds a secret, but an
// agent's command may carry one as an environment assignment (`env
// API_KEY=… agent`): such values are shown as <redacted>.
func printConfig(w io.Writer, fs *flag.FlagSet, from map[string]origin) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tVARIABLE\tVALUE\tFROM")
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "print-config" {
			return
		}
		lines := strings.Split(f.Value.String(), "\n")
		for i, v := range lines {
			name, variable, src := "--"+f.Name, envName(f.Name), string(from[f.Name])
			if i > 0 {
				name, variable, src = "", "", ""
			}
			if v == "" {
				v = `""`
			}
			if f.Name == "agent" {
				v = redactAssignments(v)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, variable, v, src)
		}
	})
	return tw.Flush()
}

// assignment matches a word that sets an environment variable.
var assignment = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|[^\s",\]]+)`)

// redactAssignments hides the values of NAME=VALUE words inside an agent
// command, ID=COMMAND (the first '=' names the agent and is kept).
func redactAssignments(v string) string {
	id, cmd, ok := strings.Cut(v, "=")
	if !ok {
		return v
	}
	return id + "=" + assignment.ReplaceAllString(cmd, "$1=<redacted>")
}

// listValue is a flag whose value is a comma-separated list; given again,
// it adds to the list. Items are trimmed, and lower-cased when lower.
type listValue struct {
	items *[]string
	lower bool
}

func (v listValue) String() string {
	if v.items == nil {
		return ""
	}
	return strings.Join(*v.items, ",")
}

func (v listValue) Set(s string) error {
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			if v.lower {
				item = strings.ToLower(item)
			}
			*v.items = append(*v.items, item)
		}
	}
	return nil
}

// prefixValue is --trusted-proxies: addresses and CIDR prefixes.
type prefixValue struct{ prefixes *[]netip.Prefix }

func (v prefixValue) String() string {
	if v.prefixes == nil {
		return ""
	}
	var s []string
	for _, p := range *v.prefixes {
		s = append(s, p.String())
	}
	return strings.Join(s, ",")
}

func (v prefixValue) Set(s string) error {
	ps, err := parsePrefixes(s)
	*v.prefixes = append(*v.prefixes, ps...)
	return err
}

// agentValue is --agent: one agent's command per use, by id.
type agentValue struct{ agents *map[string][]string }

func (v agentValue) String() string {
	if v.agents == nil {
		return ""
	}
	var lines []string
	for id, argv := range *v.agents {
		cmd := strings.Join(argv, " ")
		if slices.ContainsFunc(argv, func(a string) bool { return a == "" || strings.ContainsAny(a, " \t\"") }) {
			b, _ := json.Marshal(argv)
			cmd = string(b)
		}
		lines = append(lines, id+"="+cmd)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func (v agentValue) Set(s string) error {
	id, cmd, err := parseAgent(s)
	if err != nil {
		return err
	}
	if *v.agents == nil {
		*v.agents = map[string][]string{}
	}
	(*v.agents)[id] = cmd
	return nil
}
