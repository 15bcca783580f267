package porttest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
	"golang.org/x/crypto/ssh"

	"github.com/wharfhub/wharf/hub"
)

// KeyVault runs the hub.KeyVault contract against vaults made by open,
// each new and empty (a real vault with its own key file). The agent's
// part is in keyvault_agent.go.
func KeyVault(t *testing.T, open func(t *testing.T) hub.KeyVault) {
	t.Run("AGeneratedSSHKeyIsProtectedAndUnlocksOnlyWithItsPassphrase", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		pass := []byte("correct horse battery")
		k, err := v.GenerateSSH(pass, "wharf:gen")
		is.NoErr(err) // generate
		pub, comment, _, _, err := ssh.ParseAuthorizedKey([]byte(k.PublicKey))
		is.NoErr(err)                                                                         // an authorized_keys line
		is.Equal(pub.Type(), ssh.KeyAlgoED25519)                                              // ed25519
		is.Equal(comment, "wharf:gen")                                                        // with its comment
		is.Equal(k.Fingerprint, ssh.FingerprintSHA256(pub))                                   // the OpenSSH fingerprint
		is.True(k.Protected)                                                                  // protected
		is.True(!bytes.Contains(k.Sealed, pass))                                              // the passphrase is not in the blob
		is.True(!v.Unlocked("g"))                                                             // nothing is unlocked yet
		is.True(isInvalid(v.Unlock("g", hub.CredentialSSH, k.Sealed, []byte("wrong")), pass)) // a wrong passphrase
		is.True(isInvalid(v.Unlock("g", hub.CredentialSSH, k.Sealed, nil)))                   // an empty one
		is.True(!v.Unlocked("g"))                                                             // leave it locked
		is.NoErr(v.Unlock("g", hub.CredentialSSH, k.Sealed, pass))                            // the right one unlocks
		is.True(v.Unlocked("g"))                                                              // unlocked
		is.NoErr(v.Unlock("g", hub.CredentialSSH, k.Sealed, pass))                            // twice
		is.True(isInvalid(v.Unlock("g", hub.CredentialSSH, k.Sealed, []byte("wrong"))))       // a wrong one still refused
		is.True(v.Unlocked("g"))                                                              // and changes nothing
		v.Lock("g")
		is.True(!v.Unlocked("g")) // locked
		v.Lock("g")               // twice
		v.Lock("unknown")         // and an unknown id do nothing
	})

	t.Run("GeneratingWithAnEmptyPassphraseIsRefused", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		_, err := v.GenerateSSH(nil, "c")
		is.True(isInvalid(err)) // ssh
		_, err = v.GenerateOpenPGP("Ann <ann@example.com>", nil)
		is.True(isInvalid(err)) // openpgp
	})

	t.Run("SSHKeysImportInEveryFormat", func(t *testing.T) {
		a, _, rsaKey, ec := sshFixtures(t)
		pass := []byte(fixturePass)
		legacy, _, _, _, err := ssh.ParseAuthorizedKey([]byte(legacyEncryptedECPublic))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name           string
			key, pass      []byte
			want           ssh.PublicKey
			protected      bool
			secretInSealed []byte // a piece of the plain key the blob must not hold
		}{
			{"OpenSSH", a.OpenSSH, nil, a.Public, false, a.OpenSSH[40:80]},
			{"OpenSSHEncrypted", a.OpenSSHEnc, pass, a.Public, true, nil},
			{"PKCS8Ed25519", a.PKCS8, nil, a.Public, false, a.PKCS8[40:80]},
			{"PKCS1RSA", rsaKey.Native, nil, rsaKey.Public, false, rsaKey.Native[100:140]},
			{"PKCS8RSA", rsaKey.PKCS8, nil, rsaKey.Public, false, rsaKey.PKCS8[100:140]},
			{"SEC1ECDSA", ec.Native, nil, ec.Public, false, ec.Native[40:80]},
			{"LegacyEncryptedPEM", []byte(legacyEncryptedEC), pass, legacy, true, nil},
			{"PlainKeyGivenAPassphraseBecomesProtected", a.OpenSSH, []byte("new pass"), a.Public, true, a.OpenSSH[40:80]},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				v := open(t)
				k, err := v.ImportSSH(c.key, c.pass)
				is.NoErr(err)                                          // imported
				is.Equal(k.Fingerprint, ssh.FingerprintSHA256(c.want)) // its fingerprint
				pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.PublicKey))
				is.NoErr(err)                                         // its public key line
				is.True(bytes.Equal(pub.Marshal(), c.want.Marshal())) // is the key's
				is.Equal(k.Protected, c.protected)                    // protected when it came with a passphrase
				if c.secretInSealed != nil {
					is.True(!bytes.Contains(k.Sealed, c.secretInSealed)) // the blob does not hold the key in the clear
				}
				if len(c.pass) > 0 {
					is.True(!bytes.Contains(k.Sealed, c.pass))                          // nor the passphrase
					is.True(isInvalid(v.Unlock("i", hub.CredentialSSH, k.Sealed, nil))) // which unlock needs
				}
				is.NoErr(v.Unlock("i", hub.CredentialSSH, k.Sealed, c.pass)) // unlocks
				is.True(v.Unlocked("i"))                                     // unlocked
			})
		}
	})

	t.Run("SSHKeysTheVaultCannotLoadAreRefusedWithoutQuotingThem", func(t *testing.T) {
		a, _, _, _ := sshFixtures(t)
		pass := []byte(fixturePass)
		for _, c := range []struct {
			name      string
			key, pass []byte
		}{
			{"Empty", nil, nil},
			{"Garbage", []byte("not a key at all, not at all"), nil},
			{"APublicKey", ssh.MarshalAuthorizedKey(a.Public), nil},
			{"EncryptedWithoutPassphrase", a.OpenSSHEnc, nil},
			{"EncryptedWithAWrongPassphrase", a.OpenSSHEnc, []byte("wrong passphrase")},
			{"LegacyPEMWithoutPassphrase", []byte(legacyEncryptedEC), nil},
			{"LegacyPEMWithAWrongPassphrase", []byte(legacyEncryptedEC), []byte("wrong passphrase")},
			{"EncryptedPKCS8", []byte(pkcs8EncryptedEC), pass},
			{"CutShort", a.OpenSSH[:len(a.OpenSSH)/2], nil},
			{"TwoKeys", append(bytes.Clone(a.OpenSSH), a.PKCS8...), nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				v := open(t)
				k, err := v.ImportSSH(c.key, c.pass)
				is.True(isInvalid(err, c.pass, c.key)) // Invalid, quoting neither key nor passphrase
				is.Equal(k.Sealed, nil)                // and nothing sealed
			})
		}
	})

	t.Run("OpenPGPKeysImportKeepingTheirProtection", func(t *testing.T) {
		f := openPGPFixture(t)
		for _, c := range []struct {
			name      string
			key, pass []byte
		}{
			{"Unprotected", f.Plain, nil},
			{"Protected", f.Protected, []byte(fixturePass)},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				v := open(t)
				k, err := v.ImportOpenPGP(c.key)
				is.NoErr(err)                            // imported
				is.Equal(k.Fingerprint, f.Fingerprint)   // upper-case hex fingerprint
				is.Equal(k.Protected, c.pass != nil)     // protected as it came
				checkArmoredPublic(is, k.PublicKey)      // an armored public block
				_, err = v.SignOpenPGP("p", []byte("x")) // a locked key does not sign
				is.Equal(hub.KindOf(err), hub.Unavailable)
				if c.pass != nil {
					is.True(isInvalid(v.Unlock("p", hub.CredentialOpenPGP, k.Sealed, nil)))             // needs its passphrase
					is.True(isInvalid(v.Unlock("p", hub.CredentialOpenPGP, k.Sealed, []byte("wrong")))) // exactly
					is.True(!v.Unlocked("p"))                                                           // still locked
				}
				is.NoErr(v.Unlock("p", hub.CredentialOpenPGP, k.Sealed, c.pass)) // unlocks
				data := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n\nsigned\n")
				sig, err := v.SignOpenPGP("p", data)
				is.NoErr(err)                                                              // signs
				is.True(bytes.HasPrefix(sig, []byte("-----BEGIN PGP SIGNATURE-----\n\n"))) // armored, no headers
				is.NoErr(verifyOpenPGP(k.PublicKey, data, sig))                            // verifiable with the public key
				is.True(verifyOpenPGP(k.PublicKey, []byte("other"), sig) != nil)           // and only for its data
				is.NoErr(v.VerifyOpenPGP(k.PublicKey, data, sig))                          // the vault verifies it too
				is.True(isInvalid(v.VerifyOpenPGP(k.PublicKey, []byte("other"), sig)))     // and refuses other data
				is.True(isInvalid(v.VerifyOpenPGP(k.PublicKey, data, []byte("nonsense")))) // and garbage
				v.Lock("p")
				_, err = v.SignOpenPGP("p", data)
				is.Equal(hub.KindOf(err), hub.Unavailable) // locked again
			})
		}
	})

	t.Run("OpenPGPBlocksTheVaultCannotUseAreRefused", func(t *testing.T) {
		f := openPGPFixture(t)
		a, _, _, _ := sshFixtures(t)
		for _, c := range []struct {
			name string
			key  []byte
		}{
			{"Empty", nil},
			{"Garbage", []byte("-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nnonsense\n-----END PGP PRIVATE KEY BLOCK-----\n")},
			{"APublicKey", f.Public},
			{"TwoKeys", f.TwoKeys},
			{"CutShort", f.Damaged},
			{"AnSSHKey", a.OpenSSH},
		} {
			t.Run(c.name, func(t *testing.T) {
				is := is.New(t)
				k, err := open(t).ImportOpenPGP(c.key)
				is.True(isInvalid(err, c.key)) // Invalid, not quoting the key
				is.Equal(k.Sealed, nil)        // nothing sealed
			})
		}
	})

	t.Run("AGeneratedOpenPGPKeySignsOnceUnlocked", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		pass := []byte("pgp pass phrase")
		k, err := v.GenerateOpenPGP("Ann Example <ann@example.com>", pass)
		is.NoErr(err)                                           // generate
		is.True(k.Protected)                                    // protected
		is.True(len(k.Fingerprint) >= 40)                       // a fingerprint
		is.Equal(strings.ToUpper(k.Fingerprint), k.Fingerprint) // in upper case
		is.True(!bytes.Contains(k.Sealed, pass))                // without the passphrase
		checkArmoredPublic(is, k.PublicKey)
		is.True(strings.Contains(publicIdentity(is, k.PublicKey), "Ann Example <ann@example.com>")) // for its user ID
		is.True(isInvalid(v.Unlock("o", hub.CredentialOpenPGP, k.Sealed, []byte("wrong")), pass))   // a wrong passphrase
		is.NoErr(v.Unlock("o", hub.CredentialOpenPGP, k.Sealed, pass))                              // the right one
		sig, err := v.SignOpenPGP("o", []byte("payload\n"))
		is.NoErr(err)                                                                                   // signs
		is.NoErr(verifyOpenPGP(k.PublicKey, []byte("payload\n"), sig))                                  // verifiably
		is.True(isInvalid(v.VerifyOpenPGP(string(openPGPFixture(t).Public), []byte("payload\n"), sig))) // not as another signer's
		for _, bad := range []string{"", "Ann\nEve <e@example.com>", "Ann (x) <a@example.com>", strings.Repeat("a", 300)} {
			_, err := v.GenerateOpenPGP(bad, pass)
			is.True(isInvalid(err)) // a user ID the vault cannot use is refused
		}
	})

	t.Run("TokensSealAndOpen", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		token := []byte("ghp_ThisIsATokenValue0123456789")
		sealed, err := v.SealToken(token)
		is.NoErr(err)                                                                           // sealed
		is.True(!bytes.Contains(sealed, token))                                                 // not in the clear
		is.True(!bytes.Contains(sealed, []byte(base64.StdEncoding.EncodeToString(token))[:16])) // nor base64
		again, err := v.SealToken(token)
		is.NoErr(err)
		is.True(!bytes.Equal(sealed, again)) // every seal is fresh
		got, err := v.OpenToken(sealed)
		is.NoErr(err)        // opens
		is.Equal(got, token) // to the token
		damaged := bytes.Clone(sealed)
		damaged[len(damaged)-1] ^= 1
		_, err = v.OpenToken(damaged)
		is.True(err != nil) // a damaged seal does not open
		_, err = v.OpenToken([]byte("x"))
		is.True(err != nil)                                                 // nor a blob the vault never made
		is.True(isInvalid(v.Unlock("t", hub.CredentialToken, sealed, nil))) // a token is not unlocked
		is.True(v.Unlock("t", hub.CredentialSSH, sealed, nil) != nil)       // nor opened as a key
		is.True(!v.Unlocked("t"))
	})

	t.Run("ABlobOfAnotherTypeOrDamagedUnlocksNothing", func(t *testing.T) {
		is := is.New(t)
		v := open(t)
		a, _, _, _ := sshFixtures(t)
		k, err := v.ImportSSH(a.OpenSSH, nil)
		is.NoErr(err)
		is.True(v.Unlock("x", hub.CredentialOpenPGP, k.Sealed, nil) != nil) // an SSH blob is not an OpenPGP key
		damaged := bytes.Clone(k.Sealed)
		damaged[len(damaged)/2] ^= 1
		is.True(v.Unlock("x", hub.CredentialSSH, damaged, nil) != nil) // a damaged blob opens nothing
		is.True(v.Unlock("x", hub.CredentialSSH, nil, nil) != nil)     // nor an empty one
		is.True(!v.Unlocked("x"))                                      // so nothing is unlocked
		var e *hub.Error
		is.True(errors.As(v.Unlock("x", hub.CredentialSSH, damaged, nil), &e)) // a hub.Error
	})

	keyVaultAgent(t, open)
}

// checkArmoredPublic checks an armored public key block as gpg writes it:
// no secret, no Version or Comment header.
func checkArmoredPublic(is *is.I, armored string) {
	is.True(strings.HasPrefix(armored, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n")) // an armored public key, no headers
	is.True(!strings.Contains(armored, "PRIVATE"))                                  // and no secret
}

// publicIdentity returns the user IDs of an armored public key.
func publicIdentity(is *is.I, armored string) string {
	ring, err := openpgpRing(armored)
	is.NoErr(err) // the public key reads
	var ids []string
	for _, e := range ring {
		for name := range e.Identities {
			ids = append(ids, name)
		}
	}
	return strings.Join(ids, "\n")
}
