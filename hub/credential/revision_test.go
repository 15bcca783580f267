package credential_test

import (
	"crypto/sha256"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// hubState is what a projection is taken from.
type hubState struct {
	cat   credential.Catalog
	seals map[string][]byte
	tools map[hub.CredentialToolName]string
}

func startState() hubState {
	tools := map[hub.CredentialToolName]string{}
	for _, t := range hub.CredentialTools() {
		tools[t] = "/usr/bin/" + string(t)
	}
	return hubState{
		cat:   fixture(),
		seals: map[string][]byte{"tok-git": []byte("sealed-1"), "tok-gh-ghe": []byte("sealed-2"), "tok-gl": []byte("sealed-3")},
		tools: tools,
	}
}

func (s hubState) revision(ws string) string {
	return s.cat.Project(ws, digests(s.seals), s.tools).Revision()
}

func (s *hubState) edit(id string, f func(*hub.Credential)) {
	for i := range s.cat.Credentials {
		if s.cat.Credentials[i].ID == id {
			f(&s.cat.Credentials[i])
		}
	}
}

// TestARunningSessionNeedsARestartExactlyWhenWhatItWasGivenChanged copies
// research §8.5's consequences row by row, with §14.2 item 19's
// improvement: only the tools a session uses count. ws1 has an HTTPS
// token, a GitHub CLI token and an SSH signing key; ws3 one SSH key for
// two hosts and signing.
func TestARunningSessionNeedsARestartExactlyWhenWhatItWasGivenChanged(t *testing.T) {
	for _, tc := range []struct {
		row        string
		change     func(*hubState)
		ws1, ws3   bool // whether each needs a restart afterwards
		sameAsBase bool
	}{
		{"nothing changed", func(*hubState) {}, false, false, true},
		{"disable flips it", func(s *hubState) { s.edit("ssh-both", func(c *hub.Credential) { c.Enabled = false }) }, false, true, false},
		{"enable flips it", func(s *hubState) { s.edit("tok-git", func(c *hub.Credential) { c.Enabled = false }) }, true, false, false},
		{"assign flips it", func(s *hubState) {
			s.cat.Assignments = append(s.cat.Assignments, auth("ws1", "ssh-auth", "gitlab.com"))
		}, true, false, false},
		{"replace flips it", func(s *hubState) {
			s.cat.Assignments[2] = signing("ws1", "pgp")
		}, true, false, false},
		{"unassign flips it", func(s *hubState) {
			s.cat.Assignments = slices.Delete(s.cat.Assignments, 5, 6) // ws3's gitlab.com
		}, false, true, false},
		{"a token stored anew flips it", func(s *hubState) { s.seals["tok-git"] = []byte("sealed-1b") }, true, false, false},
		{"another workspace's token stored anew does not", func(s *hubState) { s.seals["tok-gl"] = []byte("sealed-3b") }, false, false, false},
		{"another workspace's assignment does not", func(s *hubState) {
			s.cat.Assignments = append(s.cat.Assignments, signing("ws2", "pgp"))
		}, false, false, false},
		{"an unassigned credential's change does not", func(s *hubState) { s.edit("pgp", func(c *hub.Credential) { c.Enabled = false }) }, false, false, false},
		{"ssh's path flips it for every session: GIT_SSH_COMMAND names it", func(s *hubState) { s.tools[hub.ToolSSH] = "/opt/bin/ssh" }, true, true, false},
		{"a used tool's path flips it: ssh-keygen for SSH signing", func(s *hubState) { s.tools[hub.ToolSSHKeygen] = "/opt/bin/ssh-keygen" }, true, true, false},
		{"a used tool's path flips it: gh for a GitHub CLI token", func(s *hubState) { s.tools[hub.ToolGH] = "/opt/bin/gh" }, true, false, false},
		{"a tool that stops resolving flips it", func(s *hubState) { delete(s.tools, hub.ToolGH) }, true, false, false},
		{"an unused tool's path does not (R4 flagged every workspace)", func(s *hubState) { s.tools[hub.ToolGLab] = "/opt/bin/glab" }, false, false, false},
		{"git's path flips it for every session: its wrapper names it", func(s *hubState) { s.tools[hub.ToolGit] = "/opt/bin/git" }, true, true, false},
		{"gpg's path does not: the Hub signs OpenPGP (wharf gpg)", func(s *hubState) { s.tools[hub.ToolGPG] = "/opt/bin/gpg" }, false, false, false},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			base := startState()
			at1, at3 := base.revision("ws1"), base.revision("ws3")
			now := startState()
			tc.change(&now)
			is.Equal(credential.RestartRequired(true, at1, now.revision("ws1")), tc.ws1) // ws1, running
			is.Equal(credential.RestartRequired(true, at3, now.revision("ws3")), tc.ws3) // ws3, running
			is.True(!credential.RestartRequired(false, at1, now.revision("ws1")))        // a stopped workspace never needs one
			is.True(!credential.RestartRequired(false, at3, now.revision("ws3")))        // likewise
		})
	}
	t.Run("a running session whose start revision is unknown needs one", func(t *testing.T) {
		is := is.New(t)
		is.True(credential.RestartRequired(true, "", startState().revision("ws1"))) // conservative
	})
}

// TestLockingAKeyNeedsNoRestart: a lock or unlock reaches the session's
// agent at once, so it is not part of what a session was given.
func TestLockingAKeyNeedsNoRestart(t *testing.T) {
	is := is.New(t)
	s := startState()
	before := s.revision("ws3")
	c, _ := s.cat.Credential("ssh-both")
	st, err := credential.Lock(c, credential.StateOf(c, true))
	is.NoErr(err)                                   // locked
	is.True(!st.Unlocked)                           // the state moved
	is.Equal(s.revision("ws3"), before)             // the revision did not
	is.True(len(s.revision("ws3")) == 64)           // a hex SHA-256
	is.True(s.revision("ws3") != s.revision("ws1")) // workspaces differ
}

// TestTheRevisionIsDeterministic: input order, map order and repeated
// computation never change it.
func TestTheRevisionIsDeterministic(t *testing.T) {
	is := is.New(t)
	s := startState()
	want := s.revision("ws1")
	for range 20 { // Go randomizes map iteration: twenty tries would catch one that leaked
		is.Equal(s.revision("ws1"), want) // the same every time
	}
	r := startState()
	slices.Reverse(r.cat.Credentials)
	slices.Reverse(r.cat.Assignments)
	is.Equal(r.revision("ws1"), want) // whatever order the store answers in
	p := s.cat.Project("ws1", digests(s.seals), s.tools)
	slices.Reverse(p.Assignments)
	is.Equal(p.Revision(), want) // Revision sorts what it is given
}

// TestEveryFieldOfACredentialCountsInTheRevision changes each field of
// hub.Credential in turn: a field added to the record without being
// digested fails here.
func TestEveryFieldOfACredentialCountsInTheRevision(t *testing.T) {
	base := startState()
	want := base.revision("ws1")
	typ := reflect.TypeFor[hub.Credential]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			is := is.New(t)
			s := startState()
			s.edit("tok-git", func(c *hub.Credential) {
				v := reflect.ValueOf(c).Elem().Field(i)
				switch v.Interface().(type) {
				case string, hub.CredentialType:
					v.SetString(v.String() + "x")
				case bool:
					v.SetBool(!v.Bool())
				case time.Time:
					v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
				case []hub.Capability:
					v.Set(reflect.ValueOf([]hub.Capability{hub.CapGitHubCLI}))
				default:
					t.Fatalf("field %s has a type this test cannot change: teach it", f.Name)
				}
			})
			if f.Name == "ID" { // the assignment must follow the record it names
				for j, a := range s.cat.Assignments {
					if a.CredentialID == "tok-git" {
						s.cat.Assignments[j].CredentialID = "tok-gitx"
						s.seals["tok-gitx"] = s.seals["tok-git"]
					}
				}
			}
			is.True(s.revision("ws1") != want) // the change shows
		})
	}
}

// TestToolsUsedFollowWhatTheProjectionNames lists, per assignment, the
// tools whose paths a session's configuration names.
func TestToolsUsedFollowWhatTheProjectionNames(t *testing.T) {
	c := fixture()
	always := []hub.CredentialToolName{hub.ToolSSH, hub.ToolGit}
	for _, tc := range []struct {
		row  string
		as   assignments
		want []hub.CredentialToolName
	}{
		{"none: ssh and git, which every session names", nil, always},
		{"SSH authentication: those", assignments{auth("w", "ssh-both", "github.com")}, always},
		{"SSH signing: and ssh-keygen", assignments{signing("w", "ssh-both")}, []hub.CredentialToolName{hub.ToolSSH, hub.ToolSSHKeygen, hub.ToolGit}},
		{"OpenPGP signing: no more (wharf gpg)", assignments{signing("w", "pgp")}, always},
		{"an HTTPS token: no more (wharf git-credential)", assignments{auth("w", "tok-git", "github.com")}, always},
		{"a GitHub CLI token: and gh", assignments{auth("w", "tok-gh", "github.com")}, []hub.CredentialToolName{hub.ToolSSH, hub.ToolGit, hub.ToolGH}},
		{"a GitLab CLI token: and glab", assignments{auth("w", "tok-gl", "gitlab.com")}, []hub.CredentialToolName{hub.ToolSSH, hub.ToolGit, hub.ToolGLab}},
		{"all, in the contract's order", assignments{auth("w", "tok-gl", "gitlab.com"), signing("w", "ssh-sign"), auth("w", "tok-gh", "github.com"), auth("w", "ssh-auth", "a.example")},
			[]hub.CredentialToolName{hub.ToolSSH, hub.ToolSSHKeygen, hub.ToolGit, hub.ToolGH, hub.ToolGLab}},
		{"a credential that is gone: no more", assignments{auth("w", "gone", "github.com")}, always},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			is.Equal(credential.ToolsUsed(tc.as, c.Credentials), tc.want) // the tools it names
		})
	}
}

// digests digests each seal as the Hub keeps it.
func digests(seals map[string][]byte) map[string][sha256.Size]byte {
	out := map[string][sha256.Size]byte{}
	for id, s := range seals {
		out[id] = credential.DigestSeal(s)
	}
	return out
}
