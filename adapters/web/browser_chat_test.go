package web_test

// The conversation page in a real browser against a real `wharf serve`
// whose workspace session runs the scripted ACP agent (fakes/acpagent)
// as agent "scripted": each turn plays the script its message's first
// word names (fakes/agentscript).

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

// agentBin builds the scripted agent once for every test that needs it.
var agentBin = struct {
	once sync.Once
	path string
	err  error
}{}

// scriptedAgent returns the path of the scripted agent, built the first
// time (or skips the test when there is no browser).
func scriptedAgent(t *testing.T) string {
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
	return agentBin.path
}

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
	args := []string{"--agent", browsertest.AgentFlag("scripted", scriptedAgent(t), filepath.Join(t.TempDir(), "agent"))}
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
	must(t, p.Wait(`document.querySelector('dialog[open] .agent[data-agent=scripted] input')`, wait))
	must(t, p.Click(`dialog[open] .agent[data-agent=scripted] input`))
	must(t, p.ClickText(`dialog[open]`, "Start"))
	must(t, p.Wait(`/^\/w\/[^/]+\/c\/[^/]+$/.test(location.pathname) && document.querySelector('#composer-text')`, wait))
	cid, err := browsertest.Eval[string](p, `decodeURIComponent(location.pathname.split('/')[4])`)
	must(t, err)
	return cid
}

// say types text into the composer and sends it with its button.
func say(t *testing.T, p *browsertest.Page, text string) {
	t.Helper()
	must(t, p.Type(`#composer-text`, text))
	must(t, p.Click(`.composer button[type=submit]`))
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
	must(t, p.Type(`#composer-text`, agentscript.Stream))
	must(t, p.Do(chromedp.KeyEvent("\r"))) // Enter sends, from a keyboard
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

// request is a JavaScript expression for the permission or question
// item waiting for an answer.
const pendingRequest = `document.querySelector('.transcript .request-pending')`

// Approve one permission and deny another from their buttons, answer a
// question with its form, and see a permission another device answered
// first refused in words beside it.
func TestBrowserConversationRequests(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	p, cid := e.converse(t, browsertest.Phone)

	say(t, p, agentscript.Permission)
	must(t, p.Wait(pendingRequest+` && `+status("Awaiting you"), wait))
	is.True(strings.Contains(p.Text(`.request-pending`), agentscript.CommandLine)) // what it asks for
	must(t, p.ClickText(`.request-pending`, "Allow"))
	must(t, p.Wait(`!`+pendingRequest+` && `+status("Done"), wait))
	must(t, p.Wait(shows("assistant_message", agentscript.Allowed), wait))
	is.True(strings.Contains(p.Text(`.transcript li[data-kind=permission] .request-done`), "Answered: Allow")) // what was chosen

	say(t, p, agentscript.Permission)
	must(t, p.Wait(pendingRequest, wait))
	must(t, p.ClickText(`.request-pending`, "Deny"))
	must(t, p.Wait(shows("assistant_message", agentscript.Denied)+` && `+status("Done"), wait))
	must(t, p.Wait(`[...document.querySelectorAll('.transcript li[data-kind=command] .pill')].some((s) => s.innerText.trim() === 'Failed')`, wait)) // the denied command

	say(t, p, agentscript.Question)
	must(t, p.Wait(pendingRequest+` && document.querySelector('.request-pending input[name=name]')`, wait))
	is.True(strings.Contains(p.Text(`.request-pending`), "What is your name?")) // the question
	must(t, p.Type(`.request-pending input[name=name]`, "Ann"))
	must(t, p.ClickText(`.request-pending`, "Answer"))
	must(t, p.Wait(shows("assistant_message", agentscript.Greeting+"Ann")+` && `+status("Done"), wait))
	is.Equal(p.Text(`.transcript li[data-kind=question] .request-done`), "You answered.") // settled

	// Another device answers while this page's answer is on its way: the
	// page's request is held in the browser until the other one is in.
	paused := make(chan fetch.RequestID, 1)
	p.OnEvent(func(ev any) {
		if ev, ok := ev.(*fetch.EventRequestPaused); ok {
			paused <- ev.RequestID
		}
	})
	_, err := chromedp.Call(p.Ctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*/permissions/*"}}})
	is.NoErr(err) // intercepting the page's answers
	say(t, p, agentscript.Permission)
	must(t, p.Wait(pendingRequest, wait))
	must(t, p.ClickText(`.request-pending`, "Allow"))
	var id fetch.RequestID
	select {
	case id = <-paused:
	case <-time.After(wait):
		t.Fatal("the page sent no answer")
	}
	snap, err := e.api.Snapshot(e.ctx, e.ws, cid)
	is.NoErr(err)
	var rid string
	for _, it := range snap.Items {
		if it["kind"] == "permission" && it["state"] == "pending" {
			rid = strings.TrimPrefix(it["id"].(string), "permission:")
		}
	}
	is.True(rid != "")                                                                                                                                          // the pending request
	is.NoErr(e.api.Do(e.ctx, "POST", browsertest.ConversationPath(e.ws, cid, "/permissions/"+url.PathEscape(rid)), map[string]string{"choiceId": "deny"}, nil)) // the other device
	_, err = chromedp.Call(p.Ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
	is.NoErr(err) // the page's answer goes on
	must(t, p.Wait(`[...document.querySelectorAll('.transcript li[data-kind=permission]')].some((li) =>
		li.innerText.includes('already answered') && li.innerText.includes('Answered: Deny'))`, wait)) // refused, in words, where it was clicked
	_, err = chromedp.Call(p.Ctx, fetch.Disable, cdp.Empty{})
	is.NoErr(err)
	must(t, p.Wait(`document.documentElement.scrollWidth <= window.innerWidth`, wait)) // fits a phone
}

// Hold messages while a turn runs, take one back, see the 21st refused
// in words beside the composer (which keeps it), cancel the turn, and see
// the held ones delivered in order.
func TestBrowserConversationHoldAndCancel(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	p, cid := e.converse(t, browsertest.Desktop)

	say(t, p, agentscript.Cancel)
	must(t, p.Wait(shows("assistant_message", agentscript.Working)+` && `+status("Working"), wait))
	must(t, p.ClickText(`.composer`, "Stop"))
	must(t, p.Wait(status("Interrupted")+` && !document.querySelector('.working')`, wait)) // cancelled

	say(t, p, agentscript.Cancel)
	must(t, p.Wait(status("Working"), wait))
	must(t, p.Wait(`document.querySelector('.composer button[type=submit]').innerText.trim() === 'Hold'`, wait)) // says what sending does now
	say(t, p, "echo first held")
	say(t, p, "echo taken back")
	must(t, p.Wait(`document.querySelectorAll('.held-list li').length === 2`, wait))
	is.Equal(p.Text(`.held-list li:first-child .held-text`), "echo first held") // in order
	must(t, p.ClickText(`.held-list`, "Remove held message echo taken back"))
	must(t, p.Wait(`document.querySelectorAll('.held-list li').length === 1`, wait))

	for i := range 19 {
		held, err := e.api.Send(e.ctx, e.ws, cid, fmt.Sprintf("echo more %02d", i))
		is.NoErr(err) // held by another device
		is.True(held)
	}
	must(t, p.Wait(`document.querySelectorAll('.held-list li').length === 20`, wait))
	must(t, p.Type(`#composer-text`, "echo one too many"))
	must(t, p.Click(`.composer button[type=submit]`))
	must(t, p.Wait(`document.querySelector('.composer [role=alert]') && document.querySelector('.composer [role=alert]').innerText.includes('20 messages are already held')`, wait))
	v, err := browsertest.Eval[string](p, `document.querySelector('#composer-text').value`)
	is.NoErr(err)
	is.Equal(v, "echo one too many") // kept, to send later

	must(t, p.ClickText(`.composer`, "Stop"))
	must(t, p.Wait(`[...document.querySelectorAll('.transcript li[data-kind=user_message]')].some((li) => li.innerText.trim() === 'echo first held')`, wait)) // delivered after the cancel
	must(t, p.Wait(`!document.querySelector('.held') && `+status("Done"), long))                                                                              // and the rest, in turn
	must(t, p.Wait(shows("assistant_message", "echo first held")+` && `+shows("assistant_message", "echo more 18"), wait))
	snap, err := e.api.Snapshot(e.ctx, e.ws, cid)
	is.NoErr(err)
	is.Equal(snap.Conversation.Status, "completed")
	sent := 0
	for _, it := range snap.Items {
		if it["kind"] == "user_message" && it["text"] == "echo taken back" {
			t.Error("the message taken back was delivered")
		}
		if it["kind"] == "user_message" {
			sent++
		}
	}
	is.Equal(sent, 22) // two cancelled turns and twenty held messages
	shown, err := browsertest.Eval[int](p, items("user_message")+`.length`)
	is.NoErr(err)
	is.Equal(shown, sent) // every message once
}

// Every kind of item the agent's scripts produce shows as what it is: a
// tool call's diff as a unified view, the plan, a notice, a compaction
// and the context window's use in the head. The model and the mode
// change from the head, and the conversation is renamed and closed.
func TestBrowserConversationShowsEveryKind(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	p, cid := e.converse(t, browsertest.Desktop)
	for _, script := range []string{agentscript.Tool, agentscript.Plan, agentscript.Notice, agentscript.Compaction, agentscript.Usage} {
		_, err := e.api.Send(e.ctx, e.ws, cid, script)
		is.NoErr(err) // one turn after the other
	}
	must(t, p.Wait(`document.querySelector('.ctx') && !document.querySelector('.held') && `+status("Done")+` && `+items("user_message")+`.length === 5`, wait))

	diff, err := browsertest.Eval[[]string](p, `[...document.querySelectorAll('.transcript li[data-kind=tool] .diff .dl')].map((d) => d.innerText.replace(/\s+/g, ' ').trim())`)
	is.NoErr(err)
	is.Equal(diff, []string{"@@ -1,1 +1,1 @@", "1 -old line", "1 +new line"})                             // the diff, unified
	is.True(strings.Contains(p.Text(`.transcript li[data-kind=tool] .tool-head`), agentscript.ToolTitle)) // its title
	is.Equal(p.Text(`.transcript li[data-kind=tool] .diff-path`), agentscript.DiffPath)                   // its file
	plan, err := browsertest.Eval[[]string](p, `[...document.querySelectorAll('.transcript li[data-kind=task_progress] li > span:nth-child(2)')].map((s) => s.innerText)`)
	is.NoErr(err)
	is.Equal(plan, agentscript.PlanSteps)                                                                    // the plan
	is.True(strings.Contains(p.Text(`.transcript li[data-kind=notice] .note-warn`), agentscript.NoticeText)) // a warning
	is.True(strings.Contains(p.Text(`.transcript li[data-kind=compaction]`), "Context compacted"))           // compacted
	is.True(strings.Contains(p.Text(`.ctx`), "1,200 of 200,000 tokens · $0.25"))                             // the context window

	must(t, p.Wait(`document.querySelector('select[aria-label=Model]')`, wait))
	_, err = browsertest.Eval[bool](p, `(() => { const s = document.querySelector('select[aria-label=Model]'); s.value = 'deep';
		s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`)
	is.NoErr(err) // picked another model
	must(t, p.Wait(`document.querySelector('select[aria-label=Model]').value === 'deep' && !document.querySelector('select[aria-label=Model]').disabled`, wait))
	var cfg struct{ Configuration struct{ Model string } }
	is.NoErr(e.api.Do(e.ctx, "GET", browsertest.ConversationPath(e.ws, cid, ""), nil, &cfg))
	is.Equal(cfg.Configuration.Model, "deep") // the agent's model changed

	must(t, p.ClickText(`.conv-head`, "Rename"))
	must(t, p.Type(`dialog[open] input`, "Notes on the tool"))
	must(t, p.ClickText(`dialog[open]`, "Rename"))
	must(t, p.Wait(`document.querySelector('.conv-h1').innerText === 'Notes on the tool'`, wait))
	must(t, p.ClickText(`.conv-head`, "Close"))
	must(t, p.ClickText(`dialog[open]`, "Close"))
	must(t, p.Wait(`location.pathname === '/w/`+e.ws+`' && document.querySelector('.convs .empty-title')`, wait)) // gone from the list
}
