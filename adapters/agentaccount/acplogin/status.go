package acplogin

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/driver"
	"github.com/wharfhub/wharf/hub"
)

// Bounds of what an agent's `initialize` answer puts in a status: the
// agent is untrusted, and the status reaches every dashboard.
const (
	maxMethods = 16   // methods listed; later ones are dropped
	maxVars    = 16   // variables of one env_var method
	maxID      = 128  // bytes of a method id or a variable name
	maxLabel   = 120  // bytes of a label
	maxCommand = 1024 // bytes of a command line shown
	maxVersion = 64   // bytes of the agent's version
)

// login is what the driver learned from one `initialize` answer.
type login struct {
	status hub.AgentLoginStatus
	// terminal is the first terminal method's command line ("" when none).
	terminal string
	// guidance says what to do on the Hub machine instead of a key or
	// browser login ("set X where the Hub runs, or run `y`…").
	guidance string
	// env maps an env credential's id to its variables.
	env map[string][]string
	// dropped says why methods were not listed, for the logs.
	dropped []string
}

// statusOf reads an `initialize` answer of agent (id, name), started as
// command in env: its one target, the methods it declares, the env
// credentials env shows, its capabilities and version. Nothing of env's
// values is read beyond whether a variable is set.
func statusOf(id, name string, command []string, res acpsdk.InitializeResponse, env []string) login {
	l := login{env: map[string][]string{}}
	tg := hub.AgentLoginTarget{ID: id, Name: name, Credentials: []hub.AgentCredential{}, Methods: []hub.AgentLoginMethod{}}
	var firstEnv []string
	firstCommand, agentOnly := "", false
	seen := map[string]bool{}
	for i, m := range res.AuthMethods {
		if len(tg.Methods) == maxMethods {
			l.dropped = append(l.dropped, "more than 16 methods: the rest are not listed")
			break
		}
		me, vars, why := methodOf(name, command, m)
		if why == "" && seen[me.ID] {
			why = "a second method with the same id"
		}
		if why != "" {
			l.dropped = append(l.dropped, "method "+strconv.Itoa(i)+": "+why)
			continue
		}
		seen[me.ID] = true
		tg.Methods = append(tg.Methods, me)
		switch {
		case me.Kind == hub.AgentMethodEnv:
			if firstEnv == nil {
				firstEnv = vars.required
			}
			if set := vars.setIn(env); set != nil {
				cid := "env:" + me.ID
				l.env[cid] = set
				tg.Credentials = append(tg.Credentials, hub.AgentCredential{ID: cid, Label: me.Label, Kind: hub.AgentCredentialEnv,
					Active: len(tg.Credentials) == 0, Removable: false, Variables: set})
			}
		case m.Terminal != nil && l.terminal == "":
			l.terminal = me.Command
			if firstCommand == "" || agentOnly {
				firstCommand, agentOnly = me.Command, false
			}
		case m.Agent != nil && firstCommand == "":
			firstCommand, agentOnly = me.Command, true
		}
	}
	tg.Connected = len(tg.Credentials) > 0
	l.guidance = guidance(name, firstEnv, firstCommand, agentOnly)
	l.status = hub.AgentLoginStatus{
		Capabilities: hub.AgentAccountCapabilities{Logout: res.AgentCapabilities.Auth.Logout != nil},
		Targets:      []hub.AgentLoginTarget{tg},
	}
	if res.AgentInfo != nil {
		l.status.Version = clean(res.AgentInfo.Version, maxVersion)
	}
	return l
}

// envVars are an env_var method's variables.
type envVars struct{ required, optional []string }

// setIn is the variables set in env when every required one is and at
// least one is: the credential env holds; nil when it holds none.
func (v envVars) setIn(env []string) []string {
	var set []string
	for _, name := range v.required {
		if driver.Getenv(env, name) == "" {
			return nil
		}
		set = append(set, name)
	}
	for _, name := range v.optional {
		if driver.Getenv(env, name) != "" {
			set = append(set, name)
		}
	}
	return set
}

// methodOf maps one declared method, or says why it is not listed.
func methodOf(name string, command []string, m acpsdk.AuthMethod) (hub.AgentLoginMethod, envVars, string) {
	var vars envVars
	switch {
	case m.EnvVar != nil && m.EnvVar.Type == "env_var":
		ev := m.EnvVar
		if len(ev.Vars) == 0 || len(ev.Vars) > maxVars {
			return hub.AgentLoginMethod{}, vars, "an env_var method with no or too many variables"
		}
		all := make([]string, 0, len(ev.Vars))
		for _, v := range ev.Vars {
			if !validName(v.Name) {
				return hub.AgentLoginMethod{}, vars, "an env_var method naming a variable that is not one"
			}
			all = append(all, v.Name)
			if v.Optional {
				vars.optional = append(vars.optional, v.Name)
			} else {
				vars.required = append(vars.required, v.Name)
			}
		}
		if !validID(ev.Id) {
			return hub.AgentLoginMethod{}, vars, "an unusable id"
		}
		return hub.AgentLoginMethod{ID: ev.Id, Kind: hub.AgentMethodEnv, Label: labelOr(ev.Name, strings.Join(all, ", ")), Variables: all}, vars, ""
	case m.Terminal != nil && m.Terminal.Type == "terminal":
		t := m.Terminal
		var assign []string
		for _, k := range sortedKeys(t.Env) {
			v, ok := t.Env[k].(string)
			if !ok || !validName(k) {
				return hub.AgentLoginMethod{}, vars, "a terminal method whose environment is not variables and strings"
			}
			assign = append(assign, k+"="+shellWord(v))
		}
		line, ok := commandLine(assign, append(slices.Clip(command), t.Args...))
		if !ok {
			return hub.AgentLoginMethod{}, vars, "a terminal method whose command cannot be shown on one line"
		}
		if !validID(t.Id) {
			return hub.AgentLoginMethod{}, vars, "an unusable id"
		}
		return hub.AgentLoginMethod{ID: t.Id, Kind: hub.AgentMethodCommand, Label: labelOr(t.Name, "Log in in a terminal"), Command: line}, vars, ""
	case m.Agent != nil:
		line, ok := commandLine(nil, command)
		if !ok {
			return hub.AgentLoginMethod{}, vars, "the agent's command cannot be shown on one line"
		}
		if !validID(m.Agent.Id) {
			return hub.AgentLoginMethod{}, vars, "an unusable id"
		}
		// Gemini CLI declares four such methods: their names tell them apart.
		label := "Log in inside " + name
		if n := clean(m.Agent.Name, maxLabel); n != "" {
			label += ": " + n
		}
		return hub.AgentLoginMethod{ID: m.Agent.Id, Kind: hub.AgentMethodCommand, Label: clean(label, maxLabel), Command: line}, vars, ""
	}
	return hub.AgentLoginMethod{}, vars, "a method of a type ACP does not define"
}

// guidance says what to do on the Hub machine, from the first env method
// (its required variables) and the first command (a terminal method's,
// else the agent's own).
func guidance(name string, vars []string, command string, agentOnly bool) string {
	var ways []string
	if len(vars) > 0 {
		ways = append(ways, "set "+strings.Join(vars, " and ")+" where the Hub runs")
	}
	switch {
	case command != "" && agentOnly:
		ways = append(ways, "log in inside "+name+" on the Hub machine (`"+command+"`)")
	case command != "":
		ways = append(ways, "run `"+command+"` in a terminal on the Hub machine")
	}
	if len(ways) == 0 {
		return "log " + name + " in on the Hub machine"
	}
	return strings.Join(ways, ", or ")
}

// commandLine is argv, after the variable assignments assign, as a shell
// would read it; false when a word holds a control character (it could
// not be shown on one line) or the line is longer than maxCommand.
func commandLine(assign, argv []string) (string, bool) {
	if len(argv) == 0 {
		return "", false
	}
	words := slices.Clone(assign)
	for i, a := range argv {
		if !utf8.ValidString(a) || strings.ContainsFunc(a, isControl) {
			return "", false
		}
		w := shellWord(a)
		if i == 0 && w == a && strings.Contains(a, "=") {
			w = "'" + a + "'" // else read as an assignment
		}
		words = append(words, w)
	}
	line := strings.Join(words, " ")
	return line, len(line) <= maxCommand
}

// shellWord quotes s for a POSIX shell, leaving a word of plain
// characters as it is.
func shellWord(s string) string {
	if s == "" {
		return "''"
	}
	plain := func(r rune) bool {
		return r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}
	if !strings.ContainsFunc(s, func(r rune) bool { return !plain(r) }) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// validName is an environment variable's name a shell can assign.
func validName(s string) bool {
	if s == "" || len(s) > maxID {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// validID is a method id the Hub can list and be sent back.
func validID(s string) bool {
	return s != "" && len(s) <= maxID && utf8.ValidString(s) && !strings.ContainsFunc(s, isControl)
}

// labelOr is the agent's label for a method, cleaned, or fallback.
func labelOr(label, fallback string) string {
	if l := clean(label, maxLabel); l != "" {
		return l
	}
	return clean(fallback, maxLabel)
}

// clean makes s one line of valid UTF-8 of at most max bytes.
func clean(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return isControl(r) || unicode.IsSpace(r) }), " ")
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// isControl is a character that would break a line or a terminal.
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
