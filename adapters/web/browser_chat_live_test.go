package web_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/fakes/agentscript"
)

// An agent that crashes mid-turn leaves its partial answer, a notice
// saying it exited and the turn failed, and the conversation goes on, also after
// its workspace stopped and started again from the page; an agent
// that wants a login refuses a new conversation in words, and the picker
// then says it needs one.
func TestBrowserConversationFailures(t *testing.T) {
	is := is.New(t)
	locked := browsertest.AgentFlag("locked", scriptedAgent(t), filepath.Join(t.TempDir(), "locked"), "--auth-required")
	e := newChatEnv(t, locked)
	p, _ := e.converse(t, browsertest.Desktop)

	say(t, p, agentscript.Crash)
	must(t, p.Wait(status("Failed"), wait))
	must(t, p.Wait(shows("assistant_message", agentscript.Partial), wait))                                                                     // what it said before
	must(t, p.Wait(items("notice")+`.some((li) => li.querySelector('.note-error') && li.innerText.includes('exited during the turn'))`, wait)) // why it stopped: the agent exited
	say(t, p, "echo still here")
	must(t, p.Wait(shows("assistant_message", "echo still here")+` && `+status("Done"), wait)) // a new agent process takes the next turn

	// The workspace stops under the page, and starts again from it.
	is.NoErr(e.api.Do(e.ctx, "POST", "/api/hub/sessions/"+e.ws+"/stop", nil, nil))
	must(t, p.Wait(`document.querySelector('main .note') && document.querySelector('main .note').innerText.includes('This workspace is stopped')`, wait))
	must(t, p.ClickText(`main .note`, "Start"))
	must(t, p.Wait(`!document.body.innerText.includes('This workspace is stopped') && document.querySelector('.live-on')`, long))
	say(t, p, "echo started again")
	must(t, p.Wait(shows("assistant_message", "echo started again")+` && `+shows("assistant_message", "echo still here")+` && `+status("Done"), long)) // the history, reopened, and the new turn

	must(t, p.Click(`a.back`))
	must(t, p.ClickText(`.convs`, "New conversation"))
	must(t, p.Wait(`document.querySelector('dialog[open] .agent[data-agent=locked] input')`, wait))
	must(t, p.Click(`dialog[open] .agent[data-agent=locked] input`))
	must(t, p.ClickText(`dialog[open]`, "Start"))
	must(t, p.Wait(`document.querySelector('dialog[open] [role=alert]') && document.querySelector('dialog[open] [role=alert]').innerText.includes('needs a login')`, wait)) // refused, in words
	must(t, p.Wait(`document.querySelector('dialog[open] .agent[data-agent=locked]').innerText.includes('Login required')`, wait))                                          // and the picker knows
	is.True(strings.HasSuffix(p.Text(`h1`), "Project"))                                                                                                                     // still on the workspace
}

// The workspace list follows a conversation's turns: working while one
// runs, awaiting you while a permission waits (its badge leads to the
// conversation that waits), finished when it ends; opening the
// conversation acknowledges a finished one. A conversation closed by
// another device says so.
func TestBrowserConversationActivity(t *testing.T) {
	is := is.New(t)
	e := newChatEnv(t)
	cid, err := e.api.CreateConversation(e.ctx, e.ws, "scripted", "Night shift")
	is.NoErr(err) // started by another device
	p := e.page(t, browsertest.Phone)
	must(t, p.LogIn(e.hub))
	badge := func(want string) string {
		return rowOf(e.ws) + `.querySelector('.badge').innerText.trim() === ` + browsertest.JS(want)
	}
	must(t, p.Wait(badge("Running"), wait))

	_, err = e.api.Send(e.ctx, e.ws, cid, agentscript.Cancel)
	is.NoErr(err)
	must(t, p.Wait(badge("Working"), wait))
	is.NoErr(e.api.Do(e.ctx, "POST", browsertest.ConversationPath(e.ws, cid, "/cancel"), map[string]any{}, nil))
	must(t, p.Wait(badge("Finished"), wait))
	must(t, p.Go(e.hub.URL+"w/"+e.ws+"/c/"+cid))
	must(t, p.Wait(status("Interrupted"), wait))
	must(t, p.Go(e.hub.URL))
	must(t, p.Wait(badge("Running"), wait)) // acknowledged by opening the conversation

	_, err = e.api.Send(e.ctx, e.ws, cid, agentscript.Permission)
	is.NoErr(err)
	must(t, p.Wait(badge("Awaiting you"), wait))
	must(t, p.Click(row(e.ws)+` a.badge-link`))
	must(t, p.Wait(`location.pathname === `+browsertest.JS("/w/"+e.ws+"/c/"+strings.ReplaceAll(cid, ":", "%3A"))+` && `+pendingRequest, wait)) // the conversation that waits
	must(t, p.ClickText(`.request-pending`, "Allow"))
	must(t, p.Wait(status("Done"), wait))

	// Closed by another device while in view: the page says so.
	is.NoErr(e.api.Do(e.ctx, "POST", browsertest.ConversationPath(e.ws, cid, "/close"), map[string]any{}, nil))
	must(t, p.Wait(`document.querySelector('h1').innerText === 'No such conversation'`, wait))
	must(t, p.Go(e.hub.URL))
	must(t, p.Wait(badge("Running"), wait)) // finished while in view: acknowledged
}

// The page survives its connection dropping mid-answer (it resumes from
// its cursor) and the Hub restarting (the conversation's generation
// changes: it takes the snapshot again): nothing shows twice or goes
// missing.
func TestBrowserConversationReconnects(t *testing.T) {
	t.Parallel() // one of the longest (browser_test.go)
	is := is.New(t)
	e := newChatEnv(t)
	proxy, err := browsertest.NewProxy(e.hub.URL)
	is.NoErr(err) // a network between the page and the Hub
	t.Cleanup(proxy.Close)
	via := *e.hub
	via.URL = proxy.URL
	p := e.page(t, browsertest.Desktop)
	must(t, p.LogIn(&via))
	must(t, p.Go(via.URL+"w/"+e.ws))
	cid := e.start(t, p)

	flood := `(() => { const li = ` + items("assistant_message") + `[0]; return li ? li.innerText.trim().length : 0; })()`
	allX := `(() => { const xs = ` + items("assistant_message") + `.filter((li) => /^x+$/.test(li.innerText.trim()));
		return xs.length === 1 && xs[0].innerText.trim().length === ` + strconv.Itoa(agentscript.FloodChunks) + `; })()`
	say(t, p, agentscript.Flood)
	must(t, p.Wait(flood+` > 0`, wait))
	proxy.Cut() // mid-answer, most likely
	at, _ := browsertest.Eval[int](p, flood)
	t.Logf("the connection was cut with %d of %d chunks shown", at, agentscript.FloodChunks)
	must(t, p.Wait(`document.querySelector('.live-off')`, wait))
	must(t, p.Wait(`document.querySelector('.live-on') && `+status("Done"), long))
	must(t, p.Wait(allX, wait)) // every chunk once

	proxy.Cut() // while nothing happens
	_, err = e.api.Send(e.ctx, e.ws, cid, agentscript.Stream)
	is.NoErr(err)
	must(t, p.Wait(shows("assistant_message", strings.Join(agentscript.Answer, "")), long)) // what came meanwhile, once
	must(t, p.Wait(status("Done"), wait))
	// same waits until the page shows exactly the items the Hub's
	// snapshot holds. Right after a restart the snapshot is empty for a
	// while (the child reopens the agent session, and the history comes
	// as events after it), and the page may still show the history it
	// had: each try takes the snapshot again and gives the page a moment
	// to match it, for at most 50 tries.
	same := func() {
		t.Helper()
		err := errors.New("no try")
		for range 50 {
			snap, serr := e.api.Snapshot(e.ctx, e.ws, cid)
			is.NoErr(serr)
			ids := make([]string, len(snap.Items))
			for i, it := range snap.Items {
				ids[i] = it["id"].(string)
			}
			cond := `JSON.stringify([...document.querySelectorAll('.transcript > li')].map((li) => li.dataset.item)) === ` + browsertest.JS(jsonList(ids))
			if len(ids) == 0 {
				cond = `false` // not yet: the history is on its way
			}
			if err = p.Wait(cond, 300*time.Millisecond); err == nil {
				return
			}
		}
		t.Fatal(err)
	}
	same()

	must(t, e.hub.Restart(e.ctx))
	must(t, p.Wait(`document.querySelector('.live-on')`, long))
	must(t, p.Wait(allX+` && `+shows("assistant_message", strings.Join(agentscript.Answer, "")), long)) // the history, reopened, once
	same()
	is.True(p.Text(`.conv-h1`) != "") // still on the conversation
}

// long is the wait for what takes a reconnection: under the 30 s every
// step of a page is given.
const long = 25 * time.Second

// jsonList is ids as a JSON array.
func jsonList(ids []string) string {
	b, _ := json.Marshal(ids)
	return string(b)
}
