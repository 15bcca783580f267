package service_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"runtime"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/service"
)

var who = hub.Requester{User: "ann", Client: "127.0.0.1"}

// sshKey imports a new unencrypted SSH key with caps.
func (e *env) sshKey(name string, caps ...hub.Capability) hub.CredentialView {
	e.t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		e.t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, name)
	if err != nil {
		e.t.Fatal(err)
	}
	v, err := e.ImportSSHKey(e.ctx, hub.Requester{User: "ann", Client: name}, hub.NewSSHKey{Name: name, Capabilities: caps, PrivateKey: string(pem.EncodeToMemory(block))})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// token stores a token for host with caps.
func (e *env) token(name, host, value string, caps ...hub.Capability) hub.CredentialView {
	e.t.Helper()
	v, err := e.CreateToken(e.ctx, hub.NewToken{Name: name, Host: host, Token: value, Capabilities: caps})
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// assign makes id a default of ws.
func (e *env) assign(id, ws string, role hub.CredentialRole, host string) {
	e.t.Helper()
	if _, err := e.AssignCredential(e.ctx, id, hub.AssignCredentialRequest{WorkspaceID: ws, Role: role, Host: host}); err != nil {
		e.t.Fatal(err)
	}
}

func TestAStartLendsTheSessionExactlyWhatItsWorkspaceIsAssigned(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	other := e.register(e.repo("/home/ann/other"))
	key := e.sshKey("laptop", hub.CapSSHAuthentication, hub.CapSSHSigning)
	gh := e.token("gh", "github.com", "ghp_value", hub.CapHTTPSGit, hub.CapGitHubCLI)
	elsewhere := e.sshKey("elsewhere", hub.CapSSHAuthentication)
	e.assign(key.ID, app, hub.RoleAuthentication, "gitlab.com")
	e.assign(key.ID, app, hub.RoleSigning, "")
	e.assign(gh.ID, app, hub.RoleAuthentication, "github.com")
	e.assign(elsewhere.ID, other, hub.RoleAuthentication, "gitlab.com")
	e.start(app)

	c := e.backend.Spec(app).Credentials
	is.Equal(len(c.Logins), 2)                                // two hosts
	is.Equal(c.Logins[0].Host, "github.com")                  // sorted by host
	is.True(c.Logins[0].HTTPS)                                // the token over HTTPS
	is.Equal(c.Logins[1].CredentialID, key.ID)                // the key for gitlab.com
	is.Equal(c.Logins[1].PublicKey, key.PublicKey)            // by its public half
	is.Equal(c.Signing.CredentialID, key.ID)                  // signing
	is.Equal(len(c.CLITokens), 1)                             // the GitHub CLI's token
	is.Equal(string(c.CLITokens[0].Token), "ghp_value")       // its value, for gh alone
	is.True(c.Broker != nil)                                  // and a broker to ask
	is.Equal(e.stateOf(app).CredentialRestartRequired, false) // current

	user, tok, err := c.Broker.Token(e.ctx, "GitHub.com")
	is.NoErr(err)                      // the helper gets the token for its host
	is.Equal(user, "oauth2")           // with the default user name
	is.Equal(string(tok), "ghp_value") // and its value
	_, _, err = c.Broker.Token(e.ctx, "gitlab.com")
	is.Equal(hub.KindOf(err), hub.NotFound) // a key's host gets no token
	_, _, err = c.Broker.Token(e.ctx, "evil.example")
	is.Equal(hub.KindOf(err), hub.NotFound) // nor does any other host
}

func TestCredentialRestartRequiredFollowsWhatTheSessionWouldBeGivenNow(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	key := e.sshKey("laptop", hub.CapSSHAuthentication)
	e.start(app)
	is.Equal(e.stateOf(app).CredentialRestartRequired, false) // nothing assigned, nothing changed

	e.assign(key.ID, app, hub.RoleAuthentication, "github.com")
	v := e.stateOf(app)
	is.True(v.CredentialRestartRequired)           // an assignment the session lacks
	is.Equal(v.Authentication, []string{"laptop"}) // named in the state

	_, err := e.StopWorkspace(e.ctx, app)
	is.NoErr(err)
	is.Equal(e.stateOf(app).CredentialRestartRequired, false) // a stopped workspace needs no restart
	e.start(app)
	is.Equal(e.stateOf(app).CredentialRestartRequired, false) // restarted: current

	_, err = e.LockCredential(e.ctx, key.ID)
	is.NoErr(err)
	is.Equal(e.stateOf(app).CredentialRestartRequired, false) // a lock reaches the agent live
	_, err = e.DisableCredential(e.ctx, key.ID)
	is.NoErr(err)
	is.True(e.stateOf(app).CredentialRestartRequired) // a disable changes what it would be given
}

func TestRemovingAnAssignmentFromARunningWorkspaceNeedsStop(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	key := e.sshKey("laptop", hub.CapSSHAuthentication)
	e.assign(key.ID, app, hub.RoleAuthentication, "github.com")
	e.start(app)

	req := hub.UnassignCredentialRequest{WorkspaceID: app, Role: hub.RoleAuthentication, Host: "github.com"}
	_, err := e.UnassignCredential(e.ctx, key.ID, req)
	is.Equal(hub.KindOf(err), hub.Conflict) // 409 without stop
	is.Equal(hub.MessageOf(err), "credential assignment removal conflicts with the running workspace session; stop it first or pass stop: true")
	is.True(e.Running(app)) // still running

	req.Stop = true
	removed, err := e.UnassignCredential(e.ctx, key.ID, req)
	is.NoErr(err)
	is.True(removed)         // removed
	is.True(!e.Running(app)) // and stopped, in the same operation
	is.Equal(e.stateOf(app).Authentication, []string{})

	removed, err = e.UnassignCredential(e.ctx, key.ID, req)
	is.NoErr(err)
	is.True(!removed) // nothing left to remove
}

func TestRevokingACLITokenStopsTheSessionsHoldingItAndOnlyThose(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	web := e.register(e.repo("/home/ann/web"))
	plain := e.register(e.repo("/home/ann/plain"))
	cli := e.token("gh", "github.com", "ghp_cli", hub.CapGitHubCLI)
	https := e.token("gl", "gitlab.com", "glpat_https", hub.CapHTTPSGit)
	e.assign(cli.ID, app, hub.RoleAuthentication, "github.com")
	e.assign(https.ID, web, hub.RoleAuthentication, "gitlab.com")
	e.start(app)
	e.start(web)
	e.start(plain)

	_, err := e.DisableCredential(e.ctx, https.ID)
	is.NoErr(err)
	is.True(e.Running(web)) // an HTTPS token is checked at each use: no stop
	_, _, err = e.backend.Spec(web).Credentials.Broker.Token(e.ctx, "gitlab.com")
	is.Equal(hub.KindOf(err), hub.NotFound) // and is refused at once

	_, err = e.DisableCredential(e.ctx, cli.ID)
	is.NoErr(err)
	is.True(!e.Running(app))  // the session holding the CLI token stopped
	is.True(e.Running(plain)) // the others run on
	is.True(e.Running(web))
}

func TestAssignmentsAreRefusedWhileARecoveryJournalIsPending(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	key := e.sshKey("laptop", hub.CapSSHAuthentication)
	gone := e.registerEmpty("/home/ann/gone")
	failCommit(e, 2) // the folder removal's registry update fails: its journal stays
	_, err := e.RemoveFolder(e.ctx, "", e.pathOf(gone), false)
	is.Equal(hub.KindOf(err), hub.Internal) // left for recovery
	_, err = e.AssignCredential(e.ctx, key.ID, hub.AssignCredentialRequest{WorkspaceID: app, Role: hub.RoleAuthentication, Host: "github.com"})
	is.Equal(hub.KindOf(err), hub.Conflict) // 409
	is.Equal(hub.MessageOf(err), "a pending recovery journal requires Hub recovery before credential assignment changes")
	err = e.DeleteCredential(e.ctx, key.ID, true, true)
	is.Equal(hub.KindOf(err), hub.Conflict) // delete too
	list, err := e.Credentials(e.ctx)
	is.NoErr(err)
	is.Equal(len(list.Credentials[0].Assignments), 0) // nothing assigned
}

func TestARestartedHubUnlocksOnlyTheKeysItSealedItself(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	plain := e.sshKey("plain", hub.CapSSHAuthentication)
	prot, err := e.GenerateSSHKey(e.ctx, who, hub.NewSSHKey{Name: "prot", Capabilities: []hub.Capability{hub.CapSSHSigning}, Passphrase: "pass phrase"})
	is.NoErr(err)
	_, err = e.UnlockCredential(e.ctx, who, prot.ID, "pass phrase")
	is.NoErr(err)
	is.True(e.vault.Unlocked(prot.ID)) // unlocked before the restart

	e.restart()
	is.True(e.vault.Unlocked(plain.ID)) // the Hub's own seal opens at start
	is.True(!e.vault.Unlocked(prot.ID)) // the owner's passphrase is needed again
	v, err := e.Credential(context.Background(), prot.ID)
	is.NoErr(err)
	is.Equal(v.Readiness[0].Message, "The SSH credential requires unlock.") // and the list says so
}

// waitApproval returns the one use waiting for approval, once it waits.
func (e *env) waitApproval() hub.CredentialApproval {
	e.t.Helper()
	for range 100_000 {
		if aps := e.CredentialApprovals(e.ctx); len(aps) == 1 {
			return aps[0]
		}
		runtime.Gosched()
	}
	e.t.Fatal("no use is waiting for approval")
	return hub.CredentialApproval{}
}

func TestAskOnceAsksOncePerSessionAndAHeldUseTimesOut(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	tok := e.token("gh", "github.com", "ghp_once", hub.CapHTTPSGit)
	_, err := e.AssignCredential(e.ctx, tok.ID, hub.AssignCredentialRequest{WorkspaceID: app, Role: hub.RoleAuthentication, Host: "github.com", Policy: hub.PolicyAskOnce})
	is.NoErr(err)
	e.start(app)
	broker := e.backend.Spec(app).Credentials.Broker
	done := make(chan error, 1)
	go func() { _, _, err := broker.Token(e.ctx, "github.com"); done <- err }()
	ap := e.waitApproval()
	is.Equal(ap.Purpose, hub.PurposeToken) // the first use waits
	is.NoErr(e.DecideCredentialApproval(e.ctx, e.ann, ap.ID, true))
	is.NoErr(<-done) // allowed
	_, _, err = broker.Token(e.ctx, "github.com")
	is.NoErr(err) // the second is not asked again

	_, err = e.AssignCredential(e.ctx, tok.ID, hub.AssignCredentialRequest{WorkspaceID: app, Role: hub.RoleAuthentication, Host: "github.com", Policy: hub.PolicyAskEveryTime})
	is.NoErr(err) // a stricter policy, live
	go func() { _, _, err := broker.Token(e.ctx, "github.com"); done <- err }()
	e.waitApproval()
	e.clock.Advance(service.ApprovalWait) // nobody answers
	is.True(<-done != nil)                // the use fails
	uses, err := e.CredentialUses(e.ctx, tok.ID)
	is.NoErr(err)
	is.Equal(len(uses), 3)                           // every use logged
	is.Equal(uses[0].Outcome, hub.UseTimedOut)       // newest first: timed out
	is.Equal(uses[1].Outcome, hub.UseAllowedEarlier) // allowed earlier in the session
	is.Equal(uses[2].Outcome, hub.UseAllowed)        // allowed
	is.Equal(uses[2].By, "ann")                      // by ann
	is.Equal(len(e.CredentialApprovals(e.ctx)), 0)   // nothing waits any more
}

func TestTheListFollowsEveryLockAndChangeThoughItIsASnapshot(t *testing.T) {
	is := is.New(t)
	e := newEnv(t)
	app := e.register(e.repo("/home/ann/app"))
	k, err := e.GenerateSSHKey(e.ctx, who, hub.NewSSHKey{Name: "k", Capabilities: []hub.Capability{hub.CapSSHAuthentication}, Passphrase: "pass phrase"})
	is.NoErr(err)
	status := func() string {
		l, err := e.Credentials(e.ctx)
		is.NoErr(err)
		return l.Credentials[0].Readiness[0].Status
	}
	first, err := e.Credentials(e.ctx)
	is.NoErr(err)
	again, err := e.Credentials(e.ctx)
	is.NoErr(err)
	is.True(first == again)           // nothing changed: the same snapshot
	is.Equal(status(), "unavailable") // locked
	_, err = e.UnlockCredential(e.ctx, who, k.ID, "pass phrase")
	is.NoErr(err)
	is.Equal(status(), "ready") // an unlock shows
	_, err = e.LockCredential(e.ctx, k.ID)
	is.NoErr(err)
	is.Equal(status(), "unavailable") // a lock too
	e.assign(k.ID, app, hub.RoleAuthentication, "github.com")
	l, err := e.Credentials(e.ctx)
	is.NoErr(err)
	is.Equal(len(l.Credentials[0].Assignments), 1) // and an assignment
}
