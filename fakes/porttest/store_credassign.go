package porttest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// auth and signing build the two kinds of assignment.
func auth(ws, cred, host string) hub.CredentialAssignment {
	return hub.CredentialAssignment{WorkspaceID: ws, CredentialID: cred, Role: hub.RoleAuthentication, Host: host, Policy: hub.PolicyAlways}
}

func signing(ws, cred string) hub.CredentialAssignment {
	return hub.CredentialAssignment{WorkspaceID: ws, CredentialID: cred, Role: hub.RoleSigning, Policy: hub.PolicyAlways}
}

// assignList renders every assignment as "workspace/role/host=credential",
// in the order the store lists them.
func assignList(tx hub.Tx) (string, error) {
	as, err := tx.CredentialAssignments()
	if err != nil {
		return "", err
	}
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = fmt.Sprintf("%s/%s/%s=%s", a.WorkspaceID, a.Role, a.Host, a.CredentialID)
	}
	return strings.Join(out, " "), nil
}

// seedAssignments registers workspaces w1 and w2 and credentials c1 (an
// SSH key), c2 (an OpenPGP key) and c3 (a token), each sealed as "sealed
// <id>"; assigns them as seededAssignments says; and overrides ssh.
func (k storeKit) seedAssignments(t *testing.T, s hub.Store) {
	k.update(t, s, func(tx hub.Tx) error {
		return errors.Join(tx.CreateWorkspace(k.workspace("w1", 1)), tx.CreateWorkspace(k.workspace("w2", 2)),
			tx.CreateCredential(k.sshKey("c1", 1), []byte("sealed c1")),
			tx.CreateCredential(k.pgpKey("c2", 2), []byte("sealed c2")),
			tx.CreateCredential(k.token("c3", "github.com", 3, hub.CapHTTPSGit), []byte("sealed c3")),
			tx.PutCredentialAssignment(auth("w1", "c1", "github.com")), tx.PutCredentialAssignment(signing("w1", "c2")),
			tx.PutCredentialAssignment(auth("w2", "c3", "github.com")), tx.PutCredentialAssignment(auth("w2", "c1", "gitlab.com")),
			tx.PutCredentialAssignment(signing("w2", "c1")),
			tx.PutCredentialToolOverride(hub.ToolSSH, "/opt/ssh/bin/ssh"))
	})
}

// seededAssignments is assignList of what seedAssignments stores.
const seededAssignments = "w1/authentication/github.com=c1 w1/signing/=c2 " +
	"w2/authentication/github.com=c3 w2/authentication/gitlab.com=c1 w2/signing/=c1"

// storeCredentialAssignments runs the subtests of assignments, tool
// overrides, and of the credential records under rollback and View.
func storeCredentialAssignments(t *testing.T, k storeKit) {
	ctx := k.ctx

	t.Run("CredentialAssignments", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.update(t, s, func(tx hub.Tx) error {
			return errors.Join(tx.CreateWorkspace(k.workspace("zeta", 1)), tx.CreateWorkspace(k.workspace("alpha", 2)),
				tx.CreateCredential(k.sshKey("c1", 1), nil), tx.CreateCredential(k.pgpKey("c2", 2), nil),
				tx.CreateCredential(k.token("c3", "github.com", 3, hub.CapHTTPSGit), nil))
		})
		k.update(t, s, func(tx hub.Tx) error {
			list, err := assignList(tx)
			is.NoErr(err)      // list before any put
			is.Equal(list, "") // none yet
			for _, a := range []hub.CredentialAssignment{
				signing("zeta", "c2"), auth("zeta", "c3", "github.com:2222"), auth("zeta", "c1", "github.com"),
				auth("alpha", "c1", "gitlab.com"), signing("alpha", "c2"), auth("alpha", "c3", "github.com"),
			} {
				is.NoErr(tx.PutCredentialAssignment(a)) // put
			}
			is.Equal(hub.KindOf(tx.PutCredentialAssignment(auth("w9", "c1", "github.com"))), hub.NotFound)   // an unknown workspace
			is.Equal(hub.KindOf(tx.PutCredentialAssignment(auth("zeta", "c9", "github.com"))), hub.NotFound) // an unknown credential
			is.Equal(hub.KindOf(tx.PutCredentialAssignment(signing("zeta", "c9"))), hub.NotFound)            // an unknown credential in an occupied place
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			list, err := assignList(tx)
			is.NoErr(err) // list
			is.Equal(list, "alpha/authentication/github.com=c3 alpha/authentication/gitlab.com=c1 alpha/signing/=c2 "+
				"zeta/authentication/github.com=c1 zeta/authentication/github.com:2222=c3 zeta/signing/=c2") // by workspace id, role and host; the refused puts stored nothing
			return nil
		}))

		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.PutCredentialAssignment(auth("zeta", "c3", "github.com")))  // another default for zeta's github.com
			is.NoErr(tx.PutCredentialAssignment(signing("alpha", "c1")))            // another signing key for alpha
			is.NoErr(tx.PutCredentialAssignment(auth("alpha", "c1", "gitlab.com"))) // the assignment already in place
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			list, err := assignList(tx)
			is.NoErr(err) // list
			is.Equal(list, "alpha/authentication/github.com=c3 alpha/authentication/gitlab.com=c1 alpha/signing/=c1 "+
				"zeta/authentication/github.com=c3 zeta/authentication/github.com:2222=c3 zeta/signing/=c2") // each put replaced its place's holder; putting the holder again changed nothing
			return nil
		}))

		k.update(t, s, func(tx hub.Tx) error {
			removed, err := tx.DeleteCredentialAssignment(auth("zeta", "c1", "github.com"))
			is.NoErr(err)     // delete the replaced assignment
			is.True(!removed) // it was not there any more
			removed, err = tx.DeleteCredentialAssignment(auth("zeta", "c3", "github.com"))
			is.NoErr(err)    // delete its replacement
			is.True(removed) // it was there
			removed, err = tx.DeleteCredentialAssignment(auth("zeta", "c3", "github.com"))
			is.NoErr(err)     // delete it twice
			is.True(!removed) // not there any more
			removed, err = tx.DeleteCredentialAssignment(signing("alpha", "c1"))
			is.NoErr(err)    // delete alpha's signing key
			is.True(removed) // it was there
			removed, err = tx.DeleteCredentialAssignment(auth("w9", "c9", "nowhere.example"))
			is.NoErr(err)     // delete in an unknown workspace
			is.True(!removed) // nothing there
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			list, err := assignList(tx)
			is.NoErr(err) // list
			is.Equal(list, "alpha/authentication/github.com=c3 alpha/authentication/gitlab.com=c1 "+
				"zeta/authentication/github.com:2222=c3 zeta/signing/=c2") // exactly the assignments deleted are gone
			return nil
		}))
	})

	t.Run("DeleteWorkspaceDeletesItsAssignments", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedAssignments(t, s)
		k.update(t, s, func(tx hub.Tx) error { return tx.DeleteWorkspace("w2") })
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			list, err := assignList(tx)
			is.NoErr(err)                                                    // list
			is.Equal(list, "w1/authentication/github.com=c1 w1/signing/=c2") // w2's went with it, w1's stay
			cs, err := tx.Credentials()
			is.NoErr(err)                     // list the credentials
			is.Equal(credIDs(cs), "c1,c2,c3") // the credentials stay
			return nil
		}))
	})

	t.Run("AnAssignmentKeepsItsUsePolicy", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedAssignments(t, s)
		ask := signing("w1", "c2")
		ask.Policy = hub.PolicyAskEveryTime
		k.update(t, s, func(tx hub.Tx) error { return tx.PutCredentialAssignment(ask) }) // the same place, a new policy
		is.NoErr(s.View(ctx, func(tx hub.Tx) error {
			as, err := tx.CredentialAssignments()
			is.NoErr(err) // list
			for _, a := range as {
				want := hub.PolicyAlways
				if a.WorkspaceID == "w1" && a.Role == hub.RoleSigning {
					want = hub.PolicyAskEveryTime
				}
				is.Equal(a.Policy, want) // each as put
			}
			return nil
		}))
		for _, bad := range []hub.UsePolicy{"", "sometimes"} {
			a := auth("w1", "c1", "example.com")
			a.Policy = bad
			err := s.Update(ctx, func(tx hub.Tx) error { return tx.PutCredentialAssignment(a) })
			is.Equal(hub.KindOf(err), hub.Internal) // a policy the store cannot read back is refused
		}
		k.update(t, s, func(tx hub.Tx) error {
			removed, err := tx.DeleteCredentialAssignment(signing("w1", "c2")) // named with another policy
			is.True(removed)                                                   // removed all the same
			return err
		})
	})

	t.Run("CredentialToolOverrides", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.update(t, s, func(tx hub.Tx) error {
			m, err := tx.CredentialToolOverrides()
			is.NoErr(err)       // read before any put
			is.Equal(len(m), 0) // none yet
			for _, tool := range hub.CredentialTools() {
				is.NoErr(tx.PutCredentialToolOverride(tool, "/opt/"+string(tool))) // every tool can be overridden
			}
			is.NoErr(tx.PutCredentialToolOverride(hub.ToolSSH, "/usr/local/bin/ssh")) // replace one
			is.NoErr(tx.PutCredentialToolOverride(hub.ToolGPG, ""))                   // clear one
			is.NoErr(tx.PutCredentialToolOverride(hub.ToolGPG, ""))                   // clearing again is no error
			return nil
		})
		want := map[hub.CredentialToolName]string{}
		for _, tool := range hub.CredentialTools() {
			want[tool] = "/opt/" + string(tool)
		}
		want[hub.ToolSSH] = "/usr/local/bin/ssh"
		delete(want, hub.ToolGPG)
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			m, err := tx.CredentialToolOverrides()
			is.NoErr(err)     // read
			is.Equal(m, want) // set, replaced and cleared
			m[hub.ToolGPG] = "/tmp/evil"
			delete(m, hub.ToolSSH)
			again, err := tx.CredentialToolOverrides()
			is.NoErr(err)         // read again
			is.Equal(again, want) // the map returned was the caller's
			return nil
		}))
	})

	t.Run("RollbackCredentials", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedAssignments(t, s)
		var before string
		is.NoErr(s.View(ctx, func(tx hub.Tx) (err error) { before, err = credentialState(tx); return err })) // read the seeded state
		boom := errors.New("boom")
		err := s.Update(ctx, func(tx hub.Tx) error {
			renamed := k.sshKey("c1", 1)
			renamed.Name, renamed.Enabled = "Renamed", false
			is.NoErr(tx.CreateCredential(k.sshKey("c4", 4), []byte("sealed c4"))) // create
			is.NoErr(tx.UpdateCredential(renamed))                                // update
			is.NoErr(tx.DeleteCredential("c3"))                                   // delete, cascading
			is.NoErr(tx.PutCredentialAssignment(auth("w1", "c4", "github.com")))  // replace an assignment
			is.NoErr(tx.PutCredentialAssignment(auth("w1", "c4", "example.org"))) // add one
			removed, err := tx.DeleteCredentialAssignment(signing("w1", "c2"))
			is.NoErr(err)                                                           // delete one
			is.True(removed)                                                        // it was there
			is.NoErr(tx.DeleteWorkspace("w2"))                                      // delete a workspace, cascading
			is.NoErr(tx.PutCredentialToolOverride(hub.ToolSSH, ""))                 // clear an override
			is.NoErr(tx.PutCredentialToolOverride(hub.ToolGit, "/opt/git/bin/git")) // set one
			after, err := credentialState(tx)
			is.NoErr(err)            // read the state in the transaction
			is.True(after != before) // every write above was visible in it
			return boom
		})
		is.Equal(err, boom)                          // fn's error comes back unchanged
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			after, err := credentialState(tx)
			is.NoErr(err)           // read the state
			is.Equal(after, before) // nothing of the failed update was kept
			list, err := assignList(tx)
			is.NoErr(err)                     // list the assignments
			is.Equal(list, seededAssignments) // in particular the cascades
			return nil
		}))
	})

	t.Run("ViewIsReadOnlyCredentials", func(t *testing.T) {
		s := k.open(t)
		k.seedAssignments(t, s)
		var before string
		is.New(t).NoErr(s.View(ctx, func(tx hub.Tx) (err error) { before, err = credentialState(tx); return err })) // read the seeded state
		renamed := k.sshKey("c1", 1)
		renamed.Name = "Renamed"
		for _, c := range []struct {
			name  string
			write func(hub.Tx) error
		}{
			{"CreateCredential", func(tx hub.Tx) error { return tx.CreateCredential(k.sshKey("c4", 4), nil) }},
			{"UpdateCredential", func(tx hub.Tx) error { return tx.UpdateCredential(renamed) }},
			{"DeleteCredential", func(tx hub.Tx) error { return tx.DeleteCredential("c3") }},
			{"PutCredentialAssignment", func(tx hub.Tx) error { return tx.PutCredentialAssignment(signing("w1", "c1")) }},
			{"DeleteCredentialAssignment", func(tx hub.Tx) error {
				_, err := tx.DeleteCredentialAssignment(signing("w1", "c2"))
				return err
			}},
			{"DeleteAbsentCredentialAssignment", func(tx hub.Tx) error {
				_, err := tx.DeleteCredentialAssignment(signing("w9", "c9"))
				return err
			}},
			{"PutCredentialToolOverride", func(tx hub.Tx) error { return tx.PutCredentialToolOverride(hub.ToolGit, "/opt/git") }},
			{"ClearCredentialToolOverride", func(tx hub.Tx) error { return tx.PutCredentialToolOverride(hub.ToolSSH, "") }},
			{"ClearAbsentCredentialToolOverride", func(tx hub.Tx) error { return tx.PutCredentialToolOverride(hub.ToolGH, "") }},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				is.True(s.View(ctx, c.write) != nil) // a write inside View fails
			})
		}
		is := is.New(t)
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			after, err := credentialState(tx)
			is.NoErr(err)           // read the state
			is.Equal(after, before) // no write inside View changed anything
			return nil
		}))
	})
}
