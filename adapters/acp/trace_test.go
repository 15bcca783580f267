package acp

import (
	"encoding/json"
	"strings"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/matryer/is"
)

func TestACommandLineReadsAsAShellWouldRunIt(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"plain words", []string{"go", "test", "./..."}, "go test ./..."},
		{"an empty argument", []string{"printf", ""}, "printf ''"},
		{"spaces and quotes", []string{"sh", "-c", "echo 'hi there'"}, `sh -c 'echo '\''hi there'\'''`},
		{"a newline", []string{"sh", "-c", "a\nb"}, `sh -c $'a\nb'`},
		{"a bidi override, which could hide the rest", []string{"echo", "safe\u202eevil"}, `echo $'safe\u202eevil'`},
		{"a zero-width space", []string{"rm", "a\u200bb"}, `rm $'a\u200bb'`},
		{"an escape sequence", []string{"printf", "\x1b[2J"}, `printf $'\x1b[2J'`},
		{"invalid UTF-8", []string{"cat", "a\xffb"}, `cat $'a\xffb'`},
		{"printable non-ASCII", []string{"echo", "café"}, "echo 'café'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			is.Equal(commandLine(tc.argv), tc.want) // what people read is what ran
		})
	}
}

func TestAnAgentCannotTakeOverATerminalsTrace(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"call_1", "call_1"},
		{"wharf/terminal-X", "agent/wharf/terminal-X"}, // never Wharf's own
		{"agent/x", "agent/agent/x"},                   // and never one with another agent id
		{"wharf", "wharf"},
	} {
		t.Run(tc.id, func(t *testing.T) {
			is := is.New(t)
			is.Equal(agentToolCallID(tc.id), tc.want)
			got := toolCall(rawUpdate{Kind: "tool_call_update", ToolCallID: tc.id})
			is.Equal(got.ID, tc.want) // as the conversation sees it
		})
	}
}

func TestATraceRecordsABoundedCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		arg  string
	}{
		{"a long script", strings.Repeat("é", maxTraceArgv)}, // twice the bound in bytes
		{"control bytes, escaped the most", strings.Repeat("\x01", maxTraceArgv)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			env := []acpsdk.EnvVariable{{Name: "TOKEN", Value: "s3cret"}}
			for range 2 * maxTraceEnv {
				env = append(env, acpsdk.EnvVariable{Name: strings.Repeat("N", 4096), Value: "v"})
			}
			tr := newTerminalTrace("s1", "term-1", acpsdk.CreateTerminalRequest{Command: "sh",
				Args: []string{"-c", tc.arg, "after"}, Env: env}, "/ws")
			var in traceInput
			is.NoErr(json.Unmarshal(tr.input, &in))
			is.True(in.Truncated)                                          // it says it was cut
			is.Equal(len(in.Argv), 3)                                      // the arguments after the cut are dropped
			is.True(len(tr.input) <= 8*maxTraceArgv)                       // bounded
			is.Equal(in.Env[0], "TOKEN")                                   // the names of what the agent added
			is.Equal(len(in.Env), maxTraceEnv)                             // as many as the bound
			is.True(!strings.Contains(string(tr.input), "s3cret"))         // never their values
			is.True(len([]rune(tr.title)) <= len("Run: ")+maxTitleRunes+1) // a title of bounded length
		})
	}
}
