package web_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/daemon/daemontest/browsertest"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/agentscript"
	"github.com/wharfhub/wharf/hub"
)

// Where a conversation's agent wants a login, the page offers it in
// place: on the conversation's page, an agent with one browser login
// is logged in there (its device code shown, the approval awaited) and
// the notice goes once the workspace's agents say it is logged in; in
// the New conversation picker, an agent that refused to start links to
// the Agents page, at that agent. The Hub runs real workspace sessions
// whose agents are the scripted agent ("locked" refuses every session
// until it is logged in), and fake agent logins of the same ids.
func TestBrowserConversationOffersTheAgentsLogin(t *testing.T) {
	is := is.New(t)
	bin := scriptedAgent(t)
	scripted := fakes.NewFakeAgent("scripted", "Scripted")
	locked := fakes.NewFakeAgent("locked", "Locked")
	agents := map[string][]string{
		"scripted": {bin, "--state", filepath.Join(t.TempDir(), "scripted")},
		"locked":   {bin, "--state", filepath.Join(t.TempDir(), "locked"), "--auth-required"},
	}
	ip := agentsHub(t, deviceOnly(scripted, locked), browsertest.WithSessions([]string{suite.bin}, agents))
	ctx := t.Context()
	api, err := ip.Login(ctx, "curl")
	is.NoErr(err) // another device
	repo := filepath.Join(filepath.Dir(ip.StateDir), "home", "proj")
	is.NoErr(browsertest.GitRepo(ctx, repo))            // a repository
	ws, err := api.Register(ctx, repo, "Project", true) // registered, started
	is.NoErr(err)

	// A turn ends asking for a login: the conversation's page offers it.
	cid, err := api.CreateConversation(ctx, ws, "scripted", "")
	is.NoErr(err) // started
	_, err = api.Send(ctx, ws, cid, agentscript.Auth)
	is.NoErr(err) // sent; the agent answers that it needs a login
	p := openPage(t, browsertest.Phone)
	must(t, p.LogIn(ip.Hub))
	must(t, p.Go(ip.URL+"w/"+ws+"/c/"+cid))
	note := `.conv-login [data-login=scripted]`
	must(t, p.Wait(`document.querySelector(`+browsertest.JS(note)+`) && document.querySelector('.conv-login').innerText.includes('wants a login')`, wait))
	must(t, p.Wait(`document.querySelector('.conv-login a[href="/agents?agent=scripted"]')`, wait)) // the way to the Agents page
	must(t, p.ClickText(note, "Log in (device)"))
	must(t, p.Wait(`document.querySelector('.conv-login .copy-big input') && document.querySelector('.conv-login .copy-big input').value.startsWith('ABCD-')`, wait))
	is.True(scripted.Approve()) // the person approves on the provider's page
	// The login completes; the Hub tells the workspace at once, whose
	// agent then no longer wants a login: the notice says ✓ or is gone.
	must(t, p.Wait(`!document.querySelector('.conv-login') || (document.querySelector('.conv-login .attempt-complete') && document.querySelector('.conv-login').innerText.includes('✓ Logged in'))`, wait))
	must(t, p.Wait(fitsIn(browsertest.Phone), wait))

	// The workspace's agent works again (here: a new session opens),
	// its catalog revision moves, and the notice goes.
	_, err = api.CreateConversation(ctx, ws, "scripted", "")
	is.NoErr(err) // the agent answers
	must(t, p.Wait(`!document.querySelector('.conv-login')`, wait))

	// An agent that refused to start: the picker links to its login.
	_, err = api.CreateConversation(ctx, ws, "locked", "")
	is.True(err != nil) // refused: it needs a login
	must(t, p.Go(ip.URL+"w/"+ws))
	must(t, p.ClickText(`.convs`, "New conversation"))
	must(t, p.Wait(`document.querySelector('dialog[open] .agent[data-agent=locked]') && document.querySelector('dialog[open] .agent[data-agent=locked]').innerText.includes('Login required')`, wait))
	must(t, p.Wait(`document.querySelector('dialog[open] [data-login=locked] button')`, wait)) // its login, in place
	radio, err := browsertest.Eval[float64](p, `document.querySelector('dialog[open] .agent[data-agent=locked] input').getBoundingClientRect().width`)
	is.NoErr(err)
	is.True(radio < 30) // a radio button, not a text field's box
	must(t, p.ClickText(`dialog[open] [data-login=locked]`, "Log locked in on the Agents page"))
	must(t, p.Wait(`location.pathname + location.search === '/agents?agent=locked' && !document.querySelector('dialog[open]')`, wait))
	must(t, p.Wait(`document.activeElement === document.querySelector('#agent-locked')`, wait)) // at that agent
}

// deviceOnly is the logins of agents, each offering only its device
// login: one provider, one browser login, as the conversation pages
// offer in place.
func deviceOnly(agents ...*fakes.FakeAgent) hub.AgentLogins {
	l := oneMethodLogins{}
	for _, a := range agents {
		l = append(l, oneMethod{a})
	}
	return l
}

type oneMethodLogins []hub.AgentLoginDriver

func (l oneMethodLogins) Drivers() []hub.AgentLoginDriver { return l }

// oneMethod is a FakeAgent whose status lists its device login only.
type oneMethod struct{ *fakes.FakeAgent }

func (o oneMethod) Start(ctx context.Context) (hub.AgentLoginRuntime, error) {
	rt, err := o.FakeAgent.Start(ctx)
	if err != nil {
		return nil, err
	}
	return oneMethodRuntime{rt}, nil
}

type oneMethodRuntime struct{ hub.AgentLoginRuntime }

func (r oneMethodRuntime) Status(ctx context.Context) (hub.AgentLoginStatus, error) {
	st, err := r.AgentLoginRuntime.Status(ctx)
	for i := range st.Targets {
		st.Targets[i].Methods = slices.DeleteFunc(slices.Clone(st.Targets[i].Methods), func(m hub.AgentLoginMethod) bool {
			return m.ID != fakes.FakeDeviceMethod
		})
	}
	return st, err
}
