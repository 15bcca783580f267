package acplogin

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// hostileInit is an `initialize` answer that breaks every bound.
const hostileInit = `{"protocolVersion":1,"agentInfo":{"name":"x","version":"v\u0007 1.0 \u202esneaky"},
"agentCapabilities":{},"authMethods":[
 {"id":"ok-env","name":"Key\nwith a newline","type":"env_var","vars":[{"name":"GOOD_KEY"}]},
 {"id":"bad-var","name":"Bad","type":"env_var","vars":[{"name":"A B"}]},
 {"id":"no-vars","name":"None","type":"env_var","vars":[]},
 {"id":"bad-args","name":"Args","type":"terminal","args":["--login","x\ny"]},
 {"id":"bad-env","name":"Env","type":"terminal","env":{"N":1}},
 {"id":"bad-env-name","name":"Env","type":"terminal","env":{"A B":"1"}},
 {"id":"future","name":"Some future type","type":"oauth_device"},
 {"id":"with\nnewline","name":"Id"},
 {"id":"","name":"Empty id"},
 {"id":"ok-env","name":"Duplicate"},
 {"id":"ok-term","name":"Term","type":"terminal","args":["--login","it's"],"env":{"Z":"$HOME","A":""}},
 {"id":"a1","name":"1"},{"id":"a2","name":"2"},{"id":"a3","name":"3"},{"id":"a4","name":"4"},{"id":"a5","name":"5"},
 {"id":"a6","name":"6"},{"id":"a7","name":"7"},{"id":"a8","name":"8"},{"id":"a9","name":"9"},{"id":"a10","name":"10"},
 {"id":"a11","name":"11"},{"id":"a12","name":"12"},{"id":"a13","name":"13"},{"id":"a14","name":"14"},{"id":"a15","name":"15"}
]}`

func TestWhatAnAgentDeclaresIsListedOnlyWithinBounds(t *testing.T) {
	is := is.New(t)
	var res acpsdk.InitializeResponse
	is.NoErr(json.Unmarshal([]byte(hostileInit), &res))
	l := statusOf("custom", "Custom", []string{"/opt/my agent/bin", "--acp"}, res, []string{"GOOD_KEY=sk-x"})
	st := l.status
	var ids []string
	for _, m := range st.Targets[0].Methods {
		ids = append(ids, m.ID)
	}
	is.Equal(ids, []string{"ok-env", "ok-term", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10", "a11", "a12", "a13", "a14"}) // the well-formed ones, up to the bound
	is.Equal(len(l.dropped), 10)                                                                                                          // each other one said why, once
	is.Equal(st.Targets[0].Methods[0].Label, "Key with a newline")                                                                        // a label is one line
	is.Equal(st.Targets[0].Methods[1].Command, `A='' Z='$HOME' '/opt/my agent/bin' --acp --login 'it'\''s'`)                              // a command is quoted for a shell
	is.Equal(l.terminal, st.Targets[0].Methods[1].Command)                                                                                // and is the login command
	is.Equal(st.Version, "v 1.0 sneaky")                                                                                                  // the version is plain text
	is.Equal(st.Targets[0].Credentials, []hub.AgentCredential{{ID: "env:ok-env", Label: "Key with a newline", Kind: hub.AgentCredentialEnv,
		Active: true, Variables: []string{"GOOD_KEY"}}}) // the environment's login
}

func TestLongTextIsCutOnACharacter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"short text stays", "Log in", "Log in"},
		{"spaces fold", "  a \t\n b  ", "a b"},
		{"bad UTF-8 is replaced", "a\xffb", "a\uFFFDb"},
		{"a long label ends in an ellipsis", strings.Repeat("é", 100), strings.Repeat("é", 58) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got := clean(tc.in, maxLabel)
			is.Equal(got, tc.want)         // cleaned
			is.True(len(got) <= maxLabel)  // within the bound
			is.True(utf8.ValidString(got)) // and valid
		})
	}
}

func TestCommandLinesAreWhatAShellRuns(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct {
		name   string
		assign []string
		argv   []string
		want   string
	}{
		{"plain words", nil, []string{"printf", "<%s>", "a", "--b=c", "/d/e.f"}, "<a><--b=c></d/e.f>"},
		{"spaces and quotes", nil, []string{"printf", "<%s>", "a b", "it's", `"q"`, ""}, `<a b><it's><"q"><>`},
		{"what a shell would expand", nil, []string{"printf", "<%s>", "$HOME", "`id`", "*", "a;b", "~", "!x"}, "<$HOME><`id`><*><a;b><~><!x>"},
		{"an assignment's value", []string{"V=" + shellWord("it's $HOME")}, []string{"sh", "-c", `printf '<%s>' "$V"`}, "<it's $HOME>"},
		{"unicode", nil, []string{"printf", "<%s>", "héllo wörld"}, "<héllo wörld>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			line, ok := commandLine(tc.assign, tc.argv)
			is.True(ok) // shown
			out, err := exec.Command("sh", "-c", line).Output()
			is.NoErr(err)
			is.Equal(string(out), tc.want) // the shell runs exactly argv
		})
	}
}

func TestCommandLinesThatCannotBeShownAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
	}{
		{"no command", nil},
		{"a newline", []string{"agent", "a\nb"}},
		{"an escape", []string{"agent", "\x1b[2J"}},
		{"a bidi override", []string{"agent", "\u202e"}},
		{"bad UTF-8", []string{"agent", "\xff"}},
		{"too long", []string{"agent", strings.Repeat("a", maxCommand)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ok := commandLine(nil, tc.argv)
			is.New(t).True(!ok) // not shown
		})
	}
}

func TestAProgramWithAnEqualsSignIsNotAnAssignment(t *testing.T) {
	is := is.New(t)
	line, ok := commandLine(nil, []string{"A=b", "c=d"})
	is.True(ok)
	is.Equal(line, "'A=b' c=d") // the program is quoted, its arguments need not be
}
