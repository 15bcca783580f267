package main

import (
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestAgentFlag(t *testing.T) {
	for _, tc := range []struct {
		value string
		id    string
		argv  []string
		err   string
	}{
		{"opencode=opencode acp", "opencode", []string{"opencode", "acp"}, ""},
		{`scripted=["/opt/my agent/bin","--state","a b"]`, "scripted", []string{"/opt/my agent/bin", "--state", "a b"}, ""},
		{"claude=  claude-agent-acp  ", "claude", []string{"claude-agent-acp"}, ""},
		{"noequals", "", nil, "ID=COMMAND"},
		{"a:b=x", "", nil, "ID=COMMAND"},
		{"x=", "", nil, "no command"},
		{"x=[1]", "", nil, "JSON array"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			is := is.New(t)
			id, argv, err := parseAgent(tc.value)
			if tc.err != "" {
				is.True(err != nil && strings.Contains(err.Error(), tc.err)) // refused, saying why
				return
			}
			is.NoErr(err)                                                 // read
			is.Equal(id, tc.id)                                           // the id
			is.Equal(strings.Join(argv, "|"), strings.Join(tc.argv, "|")) // the command
		})
	}
}
