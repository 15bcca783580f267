package porttest

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// sshKey, pgpKey and token return credentials of each type with every
// field set, created n nanoseconds after t0 (so times differ below the
// second).
func (k storeKit) sshKey(id string, n int) hub.Credential {
	return hub.Credential{ID: id, Name: "Laptop key " + id, Type: hub.CredentialSSH,
		Capabilities: []hub.Capability{hub.CapSSHSigning, hub.CapSSHAuthentication}, Enabled: true,
		CreatedAt: k.t0.Add(time.Duration(n)), PublicKey: "ssh-ed25519 AAAAC3Nz" + id + " wharf",
		Fingerprint: "SHA256:" + id, Host: "h-" + id, Username: "u-" + id, Protected: true}
}

func (k storeKit) pgpKey(id string, n int) hub.Credential {
	return hub.Credential{ID: id, Name: "Clé de signature " + id, Type: hub.CredentialOpenPGP,
		Capabilities: []hub.Capability{hub.CapOpenPGPSigning}, Enabled: true,
		CreatedAt:   k.t0.Add(time.Duration(n)),
		PublicKey:   "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZ" + id + "\n-----END PGP PUBLIC KEY BLOCK-----\n",
		Fingerprint: strings.ToUpper(hex.EncodeToString([]byte(id))), Host: "h-" + id, Username: "u-" + id, Protected: true}
}

// token has no fingerprint, as a token has none.
func (k storeKit) token(id, host string, n int, caps ...hub.Capability) hub.Credential {
	return hub.Credential{ID: id, Name: "Token " + id, Type: hub.CredentialToken, Capabilities: caps, Enabled: true,
		CreatedAt: k.t0.Add(time.Duration(n)), Host: host, Username: "u-" + id}
}

// showCredential renders every field of c found by reflection, the time
// as Unix nanoseconds, so a comparison says which field differs and a
// field added to the record is compared without being named here.
func showCredential(c hub.Credential) string {
	var b strings.Builder
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		f := v.Field(i)
		if tm, ok := f.Interface().(time.Time); ok {
			fmt.Fprintf(&b, "%s=%d ", v.Type().Field(i).Name, tm.UnixNano())
			continue
		}
		fmt.Fprintf(&b, "%s=%q ", v.Type().Field(i).Name, fmt.Sprint(f.Interface()))
	}
	return b.String()
}

// unsetField names a field of c left at its zero value, or "".
func unsetField(c hub.Credential) string {
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			return v.Type().Field(i).Name
		}
	}
	return ""
}

// credIDs lists the ids of cs, in order, comma-separated.
func credIDs(cs []hub.Credential) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return strings.Join(out, ",")
}

// credentialState renders everything the CredentialStore holds: every
// credential with its secret, every assignment and every override, so a
// test can tell that a refused or rolled-back write changed nothing.
func credentialState(tx hub.Tx) (string, error) {
	var b strings.Builder
	cs, err := tx.Credentials()
	if err != nil {
		return "", err
	}
	for _, c := range cs {
		sealed, err := tx.CredentialSecret(c.ID)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s sealed=%x\n", showCredential(c), sealed)
	}
	list, err := assignList(tx)
	if err != nil {
		return "", err
	}
	b.WriteString(list + "\n")
	overrides, err := tx.CredentialToolOverrides()
	if err != nil {
		return "", err
	}
	for _, tool := range slices.Sorted(maps.Keys(overrides)) {
		fmt.Fprintf(&b, "%s=%s ", tool, overrides[tool])
	}
	return b.String(), nil
}

// storeCredentials runs the subtests of the credential records and their
// secrets; storeCredentialAssignments those of assignments and overrides.
func storeCredentials(t *testing.T, k storeKit) {
	ctx := k.ctx

	t.Run("Credentials", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		zeta, alpha := k.sshKey("zeta", 1), k.pgpKey("alpha", 2)
		alpha.Enabled, alpha.Protected = false, false
		mid := k.token("mid", "git.example.com:8443", 3, hub.CapGitHubCLI, hub.CapHTTPSGit)
		lab := k.token("lab", "[2001:db8::1]", 4, hub.CapGitLabCLI)
		lab.Username = ""
		all := []hub.Credential{zeta, alpha, mid, lab}
		is.Equal(unsetField(zeta), "") // the suite sets every field of a key, so a new field must round-trip too
		var types []hub.CredentialType
		var caps []hub.Capability
		for _, c := range all {
			types, caps = append(types, c.Type), append(caps, c.Capabilities...)
		}
		is.True(!slices.ContainsFunc(hub.CredentialTypes(), func(t hub.CredentialType) bool { return !slices.Contains(types, t) })) // the suite stores every type
		is.True(!slices.ContainsFunc(hub.Capabilities(), func(c hub.Capability) bool { return !slices.Contains(caps, c) }))         // and every capability
		want := make([]string, len(all))
		for i, c := range all {
			want[i] = showCredential(c)
		}

		k.update(t, s, func(tx hub.Tx) error {
			cs, err := tx.Credentials()
			is.NoErr(err)        // list before any create
			is.Equal(len(cs), 0) // a new store has no credentials
			for _, c := range all {
				is.NoErr(tx.CreateCredential(c, []byte("sealed "+c.ID))) // create
			}
			zeta.Capabilities[0] = "scribbled" // the caller reuses its slice
			cs, err = tx.Credentials()
			is.NoErr(err)                               // list in the same transaction
			is.Equal(credIDs(cs), "zeta,alpha,mid,lab") // creates are visible at once
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			cs, err := tx.Credentials()
			is.NoErr(err)                               // list
			is.Equal(credIDs(cs), "zeta,alpha,mid,lab") // creation order, not id order
			for i, c := range cs {
				is.Equal(showCredential(c), want[i]) // every field round-trips, capabilities in order, the time to the nanosecond
			}
			got, err := tx.Credential("alpha")
			is.NoErr(err)                          // find by id
			is.Equal(showCredential(got), want[1]) // the same record
			_, err = tx.Credential("nope")
			is.Equal(hub.KindOf(err), hub.NotFound) // unknown id
			cs[0].Capabilities[0], got.Capabilities[0] = "scribbled", "scribbled"
			again, err := tx.Credential("zeta")
			is.NoErr(err)                            // read zeta again
			is.Equal(showCredential(again), want[0]) // the listed record was the caller's copy
			again, err = tx.Credential("alpha")
			is.NoErr(err)                            // read alpha again
			is.Equal(showCredential(again), want[1]) // and so was the one found by id
			return nil
		}))
	})

	t.Run("CredentialSecrets", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		sealed := []byte{0x00, 0xff, 0xfe, '\n', 0x00, 0xc3, 0x28} // NUL bytes and invalid UTF-8
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.CreateCredential(k.sshKey("c1", 1), sealed))                            // a binary secret
			is.NoErr(tx.CreateCredential(k.token("c2", "github.com", 2, hub.CapHTTPSGit), nil)) // no secret at all
			sealed[0] = 'X'                                                                     // the caller reuses its buffer
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := tx.CredentialSecret("c1")
			is.NoErr(err)                                                               // read the secret
			is.True(bytes.Equal(got, []byte{0x00, 0xff, 0xfe, '\n', 0x00, 0xc3, 0x28})) // byte for byte, unaliased
			got[1] = 'X'
			again, err := tx.CredentialSecret("c1")
			is.NoErr(err)                  // read again
			is.Equal(again[1], byte(0xff)) // the returned secret was the caller's copy
			none, err := tx.CredentialSecret("c2")
			is.NoErr(err)          // read the absent secret
			is.Equal(len(none), 0) // no secret stays no secret
			_, err = tx.CredentialSecret("nope")
			is.Equal(hub.KindOf(err), hub.NotFound) // unknown id
			return nil
		}))
	})

	t.Run("CredentialConflicts", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		a, b := k.sshKey("a", 1), k.pgpKey("b", 2)
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.CreateCredential(a, []byte("A")))                                        // a key
			is.NoErr(tx.CreateCredential(b, []byte("B")))                                        // another
			is.NoErr(tx.CreateCredential(k.token("t1", "github.com", 3, hub.CapHTTPSGit), nil))  // a token, with no fingerprint
			is.NoErr(tx.CreateCredential(k.token("t2", "github.com", 4, hub.CapGitHubCLI), nil)) // another: no fingerprint is nobody's
			sameID := k.sshKey("other", 5)
			sameID.ID = "a"
			is.Equal(hub.KindOf(tx.CreateCredential(sameID, []byte("X"))), hub.Conflict) // an id in use
			sameKey := k.sshKey("a", 6)
			sameKey.ID = "a2"
			is.Equal(hub.KindOf(tx.CreateCredential(sameKey, []byte("X"))), hub.Conflict) // a fingerprint another key has
			tokenID := k.token("b", "github.com", 7, hub.CapHTTPSGit)
			is.Equal(hub.KindOf(tx.CreateCredential(tokenID, nil)), hub.Conflict) // a token's id in use
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			cs, err := tx.Credentials()
			is.NoErr(err)                                      // list
			is.Equal(credIDs(cs), "a,b,t1,t2")                 // the refused creates stored nothing
			is.Equal(showCredential(cs[0]), showCredential(a)) // nor changed the record they clashed with
			got, err := tx.CredentialSecret("a")
			is.NoErr(err)              // read a's secret
			is.Equal(string(got), "A") // nor its secret
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.DeleteCredential("a")) // delete a
			again := k.sshKey("a", 8)
			again.ID = "a3"
			is.NoErr(tx.CreateCredential(again, []byte("A3"))) // a deleted key's fingerprint is free again
			return nil
		})
	})

	t.Run("UpdateCredential", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		c := k.sshKey("c1", 1)
		k.update(t, s, func(tx hub.Tx) error { return tx.CreateCredential(c, []byte("S")) })
		k.update(t, s, func(tx hub.Tx) error {
			changed := k.pgpKey("other", 9) // every field differs
			changed.ID, changed.Name, changed.Enabled = "c1", "Renamed", false
			is.NoErr(tx.UpdateCredential(changed)) // update
			ghost := k.sshKey("ghost", 2)
			is.Equal(hub.KindOf(tx.UpdateCredential(ghost)), hub.NotFound) // an unknown id
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			got, err := tx.Credential("c1")
			is.NoErr(err) // read the update back
			want := c
			want.Name, want.Enabled = "Renamed", false
			is.Equal(showCredential(got), showCredential(want)) // name and enabled replaced, every other field kept
			sealed, err := tx.CredentialSecret("c1")
			is.NoErr(err)                 // read the secret
			is.Equal(string(sealed), "S") // kept
			cs, err := tx.Credentials()
			is.NoErr(err)               // list
			is.Equal(credIDs(cs), "c1") // the unknown id was not created
			return nil
		}))
	})

	t.Run("DeleteCredential", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		k.seedAssignments(t, s)
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.DeleteCredential("c1"))                           // delete c1
			is.Equal(hub.KindOf(tx.DeleteCredential("c1")), hub.NotFound) // delete twice
			is.Equal(hub.KindOf(tx.DeleteCredential("c9")), hub.NotFound) // delete an unknown id
			return nil
		})
		is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
			_, err := tx.Credential("c1")
			is.Equal(hub.KindOf(err), hub.NotFound) // the record is gone
			_, err = tx.CredentialSecret("c1")
			is.Equal(hub.KindOf(err), hub.NotFound) // and its secret
			cs, err := tx.Credentials()
			is.NoErr(err)                  // list
			is.Equal(credIDs(cs), "c2,c3") // the others stay
			list, err := assignList(tx)
			is.NoErr(err)                                                    // list the assignments
			is.Equal(list, "w1/signing/=c2 w2/authentication/github.com=c3") // c1's went with it, in both workspaces; the others stay
			sealed, err := tx.CredentialSecret("c2")
			is.NoErr(err)                         // read another secret
			is.Equal(string(sealed), "sealed c2") // kept
			return nil
		}))
	})

	t.Run("UnnamedCredentialValuesAreRefused", func(t *testing.T) {
		s := k.open(t)
		k.seedAssignments(t, s)
		var before string
		is.New(t).NoErr(s.View(ctx, func(tx hub.Tx) (err error) { before, err = credentialState(tx); return err })) // read the seeded state
		withType, withCap, twice := k.sshKey("n1", 9), k.sshKey("n2", 9), k.sshKey("n3", 9)
		withType.Type = "x509"
		withCap.Capabilities = append(withCap.Capabilities, "smtp")
		twice.Capabilities = []hub.Capability{hub.CapSSHSigning, hub.CapSSHSigning}
		for _, c := range []struct {
			name  string
			write func(hub.Tx) error
		}{
			{"UnknownType", func(tx hub.Tx) error { return tx.CreateCredential(withType, nil) }},
			{"UnknownCapability", func(tx hub.Tx) error { return tx.CreateCredential(withCap, nil) }},
			{"RepeatedCapability", func(tx hub.Tx) error { return tx.CreateCredential(twice, nil) }},
			{"UnknownRole", func(tx hub.Tx) error {
				return tx.PutCredentialAssignment(hub.CredentialAssignment{WorkspaceID: "w1", CredentialID: "c1", Role: "owner", Host: "github.com", Policy: hub.PolicyAlways})
			}},
			{"SigningWithAHost", func(tx hub.Tx) error {
				return tx.PutCredentialAssignment(hub.CredentialAssignment{WorkspaceID: "w1", CredentialID: "c3", Role: hub.RoleSigning, Host: "github.com", Policy: hub.PolicyAlways})
			}},
			{"AuthenticationWithoutAHost", func(tx hub.Tx) error {
				return tx.PutCredentialAssignment(hub.CredentialAssignment{WorkspaceID: "w1", CredentialID: "c3", Role: hub.RoleAuthentication, Policy: hub.PolicyAlways})
			}},
			{"UnknownTool", func(tx hub.Tx) error { return tx.PutCredentialToolOverride("scp", "/usr/bin/scp") }},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				k.update(t, s, func(tx hub.Tx) error {
					err := c.write(tx)
					is.True(err != nil)                     // the write is refused (KindOf(nil) is Internal too)
					is.Equal(hub.KindOf(err), hub.Internal) // as a bug, not stored as a guess
					return nil
				})
				is.NoErr(s.View(ctx, func(tx hub.Tx) error { // the view succeeds
					after, err := credentialState(tx)
					is.NoErr(err)           // read the state
					is.Equal(after, before) // the refused write stored nothing
					return nil
				}))
			})
		}
	})
}
