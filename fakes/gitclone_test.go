package fakes_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
	"github.com/wharfhub/wharf/hub"
)

// newCloneFixture is the fake's clone contract fixture: each source is a
// script.
func newCloneFixture(t *testing.T) porttest.CloneFixture {
	f := fakes.NewFS("/home/ann")
	f.MkdirAll("/work")
	g := fakes.NewGit(f)
	g.ScriptClone("https://h/ok.git", fakes.CloneScript{Output: []string{"Cloning into 'c'...\r\n", "Receiving objects: 100%\r\n"}})
	g.ScriptClone("https://h/missing.git", fakes.CloneScript{Output: []string{"fatal: repository not found\r\n"}, Exit: 128})
	g.ScriptClone("https://h/stall.git", fakes.CloneScript{Stall: true})
	g.ScriptClone("https://h/private.git", fakes.CloneScript{
		Prompts: []string{"Username for 'https://h': ", "Password for 'https://{answer}@h': "},
		Answers: []string{"ann", "the-password"},
	})
	return porttest.CloneFixture{Git: g, FS: f, Dir: "/work", Source: "https://h/ok.git", Failing: "https://h/missing.git",
		Stalling: "https://h/stall.git", Prompting: "https://h/private.git", Prompt: "Username for",
		Answer: "ann", AfterAnswer: "Password for 'https://{answer}@h'"}
}

func TestGitClone(t *testing.T) {
	porttest.GitClone(t, newCloneFixture)
}

func TestAScriptedCloneIsCountedAndCanFailToStart(t *testing.T) {
	is := is.New(t)
	fx := newCloneFixture(t)
	g := fx.Git.(*fakes.Git)
	g.FailNext(fakes.GitClone, hub.Errorf(hub.Internal, "no git"))
	_, err := g.Clone(t.Context(), hub.CloneRequest{URL: fx.Source, Target: "/work/c"})
	is.Equal(hub.KindOf(err), hub.Internal) // the scripted failure
	_, err = fx.FS.Lstat("/work/c")
	is.True(err != nil)                  // leaves nothing
	is.Equal(g.Calls(fakes.GitClone), 1) // and is counted
}
