package web_test

// The conversation page in a real browser against a real `wharf serve`
// whose workspace session runs the scripted ACP agent (fakes/acpagent)
// as agent "scripted": each turn plays the script its message's first
// word names (fakes/agentscript).

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/web/internal/browsertest"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

// agentBin builds the scripted agent once for every test that needs it.
var agentBin = struct {
	once sync.Once
	path string
	err  error
}{}

// chatEnv is a Hub with the scripted agent and one running workspace.
type chatEnv struct {
	*env
	ws   string // the workspace's id
	repo string // its folder
}

// newChatEnv starts a Hub whose sessions know agent "scripted" (and any
// more agents given as --agent values), registers a repository and
// starts its session.
func newChatEnv(t *testing.T, agents ...string) *chatEnv {
	t.Helper()
	needBrowser(t)
	agentBin.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		agentBin.path, agentBin.err = browsertest.BuildAgent(ctx, suite.tmp)
	})
	if agentBin.err != nil {
		t.Fatal(agentBin.err)
	}
	args := []string{"--agent", browsertest.AgentFlag("scripted", agentBin.path, filepath.Join(t.TempDir(), "agent"))}
	for _, a := range agents {
		args = append(args, "--agent", a)
	}
	e := newEnvArgs(t, args)
	repo := e.repo(t, "proj")
	ws, err := e.api.Register(e.ctx, repo, "Project", true)
	if err != nil {
		t.Fatal(err)
	}
	return &chatEnv{env: e, ws: ws, repo: repo}
}

// converse opens a page at the workspace, starts a conversation with the
// scripted agent through "New conversation" and returns the page and the
// conversation's id.
func (e *chatEnv) converse(t *testing.T, screen browsertest.Screen) (*browsertest.Page, string) {
	t.Helper()
	p := e.page(t, screen)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"w/"+e.ws))
	return p, e.start(t, p)
}

// start starts a conversation from the workspace page the page is on.
func (e *chatEnv) start(t *testing.T, p *browsertest.Page) string {
	t.Helper()
	must(t, p.ClickText(`.convs`, "New conversation"))
	must(t, p.Wait(`document.querySelector('dialog[open] .agent[data-agent=scripted] input:checked')`, wait))
	must(t, p.ClickText(`dialog[open]`, "Start"))
	must(t, p.Wait(`/^\/w\/[^/]+\/c\/[^/]+$/.test(location.pathname) && document.querySelector('#composer-text')`, wait))
	cid, err := browsertest.Eval[string](p, `decodeURIComponent(location.pathname.split('/')[4])`)
	must(t, err)
	return cid
}

// say types text into the composer and sends it with Enter.
func say(t *testing.T, p *browsertest.Page, text string) {
	t.Helper()
	must(t, p.Type(`#composer-text`, text))
	must(t, p.Do(chromedp.KeyEvent("\r")))
	must(t, p.Wait(`document.querySelector('#composer-text').value === ''`, wait))
}

// item is a JavaScript expression for the transcript's items of kind.
func items(kind string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.transcript > li[data-kind=%s]')]`, kind)
}

// shows is a condition: an item of kind shows text (trimmed), once.
func shows(kind, text string) string {
	return fmt.Sprintf(`%s.filter((li) => li.innerText.trim() === %s).length === 1`, items(kind), browsertest.JS(text))
}

// status is a condition: the conversation's badge reads label.
func status(label string) string {
	return `document.querySelector('.conv-head .badge') && document.querySelector('.conv-head .badge').innerText.trim() === ` + browsertest.JS(label)
}

// Start a conversation with the agent the picker offers (the others shown
// with why they cannot be used), watch an answer stream in with its
// thought, its usage and its status, and see the conversation in the
// workspace's list.
func TestBrowserConversationStreams(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(e.hub))
	must(t, p.Go(e.hub.URL+"w/"+e.ws))
	must(t, p.Wait(`document.querySelector('.convs .empty-title')`, wait)) // none yet
	must(t, p.ClickText(`.convs`, "New conversation"))
	must(t, p.Wait(`document.querySelector('dialog[open] .agent[data-agent=claude]')`, wait))
	is.True(strings.Contains(p.Text(`dialog[open] .agent[data-agent=claude]`), "Not installed")) // says why
	disabled, err := browsertest.Eval[bool](p, `document.querySelector('dialog[open] .agent[data-agent=claude] input').disabled`)
	is.NoErr(err)
	is.True(disabled) // and cannot be picked
	must(t, p.Do(chromedp.KeyEvent(kb.Escape)))

	cid := e.start(t, p)
	must(t, p.Wait(status("New"), wait))
	say(t, p, agentscript.Stream)
	must(t, p.Wait(shows("user_message", agentscript.Stream), wait))
	must(t, p.Wait(shows("assistant_message", strings.Join(agentscript.Answer, "")), wait)) // streamed in
	must(t, p.Wait(status("Done"), wait))
	must(t, p.Wait(`document.querySelector('.transcript .usage') && document.querySelector('.transcript .usage').innerText.includes('10 in · 5 out')`, wait))
	thought, err := browsertest.Eval[bool](p, items("reasoning")+`.length === 1 && !document.querySelector('.transcript details.reasoning').open`)
	is.NoErr(err)
	is.True(thought) // the thought, collapsed
	is.True(strings.Contains(p.Text(`.transcript details.reasoning`), "Thought"))

	snap, err := e.api.Snapshot(e.ctx, e.ws, cid)
	is.NoErr(err) // the Hub's view
	shown, err := browsertest.Eval[int](p, `document.querySelectorAll('.transcript > li').length`)
	is.NoErr(err)
	is.Equal(shown, len(snap.Items)) // every item once

	must(t, p.Click(`a.back`))
	must(t, p.Wait(`document.querySelector('.conv-row[data-conv=`+browsertest.JS(cid)+`] .badge')`, wait))
	is.Equal(p.Text(`.conv-row .badge`), "Done") // in the workspace's list
}
