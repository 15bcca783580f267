package keyvault_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/ProtonMail/go-crypto/openpgp/s2k"
	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// pgpKey makes an OpenPGP key as cfg says and returns its armored secret
// block, protected with "pass" when protect is set.
func pgpKey(t *testing.T, cfg *packet.Config, protect bool) []byte {
	t.Helper()
	e, err := openpgp.NewEntity("Test", "", "test@example.com", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var bin bytes.Buffer
	if protect {
		if err := e.EncryptPrivateKeys([]byte("pass"), cfg); err != nil {
			t.Fatal(err)
		}
		err = e.SerializePrivateWithoutSigning(&bin, cfg)
	} else {
		err = e.SerializePrivate(&bin, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return armorBlock(t, openpgp.PrivateKeyType, bin.Bytes())
}

func armorBlock(t *testing.T, kind string, bin []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := armor.Encode(&out, kind, nil)
	if err == nil {
		_, err = w.Write(bin)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// argon2Config protects keys with Argon2 (1 pass, 1 lane, 2^10 KiB),
// which RFC 9580 allows only with AEAD, in version 4 or 6 keys.
func argon2Config(v6 bool) *packet.Config {
	cfg := &packet.Config{
		Algorithm:  packet.PubKeyAlgoEdDSA,
		AEADConfig: &packet.AEADConfig{},
		S2KConfig: &s2k.Config{S2KMode: s2k.Argon2S2K, Argon2Config: &s2k.Argon2Config{
			NumberOfPasses: 1, DegreeOfParallelism: 1, Memory: 1 << 10,
		}},
	}
	if v6 {
		cfg.V6Keys, cfg.Algorithm = true, packet.PubKeyAlgoEd25519
	}
	return cfg
}

// withArgon2Memory rewrites the memory exponent of every Argon2 S2K
// specifier (mode 4, 16 salt bytes, passes 1, lanes 1, exponent 10) in an
// armored key.
func withArgon2Memory(t *testing.T, armored []byte, exp byte) []byte {
	t.Helper()
	block, err := armor.Decode(bytes.NewReader(armored))
	if err != nil {
		t.Fatal(err)
	}
	var bin bytes.Buffer
	if _, err := bin.ReadFrom(block.Body); err != nil {
		t.Fatal(err)
	}
	b, n := bin.Bytes(), 0
	for i := 0; i+19 < len(b); i++ {
		if b[i] == 4 && b[i+17] == 1 && b[i+18] == 1 && b[i+19] == 10 {
			b[i+19] = exp
			n++
		}
	}
	if n == 0 {
		t.Fatal("no Argon2 specifier found")
	}
	return armorBlock(t, openpgp.PrivateKeyType, b)
}

func TestAnArgon2ProtectedKeyWithinTheBoundsUnlocksAndSigns(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		t.Run(map[bool]string{false: "V4", true: "V6"}[v6], func(t *testing.T) {
			is := is.New(t)
			v := newVault(t)
			k, err := v.ImportOpenPGP(pgpKey(t, argon2Config(v6), true))
			is.NoErr(err)                                                            // imported
			is.True(k.Protected)                                                     // protected
			is.NoErr(v.Unlock("a", hub.CredentialOpenPGP, k.Sealed, []byte("pass"))) // unlocks
			_, err = v.SignOpenPGP("a", []byte("data"))
			is.NoErr(err) // and signs
		})
	}
}

func TestAnArgon2KeyAskingForMoreMemoryThanTheBoundIsRefusedBeforeItRuns(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		t.Run(map[bool]string{false: "V4", true: "V6"}[v6], func(t *testing.T) {
			is := is.New(t)
			key := withArgon2Memory(t, pgpKey(t, argon2Config(v6), true), 31) // 2 TiB
			_, err := newVault(t).ImportOpenPGP(key)
			is.Equal(hub.MessageOf(err), "the key's passphrase protection asks for more memory or time than the Hub allows") // refused
		})
	}
}

func TestOpenPGPKeysTheVaultCannotUseAreRefusedWithAReason(t *testing.T) {
	born := func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
	expired := pgpKey(t, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: born, KeyLifetimeSecs: 60}, false)
	plain := pgpKey(t, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}, false)
	for _, c := range []struct {
		name    string
		key     []byte
		message string
	}{
		{"AnExpiredKey", expired, "the key has no secret key able to sign (none, or it is expired or revoked)"},
		{"TwoArmoredBlocks", append(bytes.Clone(plain), plain...), "the block must hold exactly one primary key"},
		{"APublicKeyBlock", bytes.Replace(plain, []byte("PRIVATE KEY"), []byte("PUBLIC KEY"), 2),
			"the text is not an ASCII-armored OpenPGP private key block"},
		{"TooLarge", bytes.Repeat([]byte("A"), 1<<20+1), "the OpenPGP key is larger than 1 MiB"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := newVault(t).ImportOpenPGP(c.key)
			is.Equal(hub.KindOf(err), hub.Invalid)  // invalid
			is.Equal(hub.MessageOf(err), c.message) // saying why
		})
	}
}

func TestLockingAnOpenPGPKeyClearsItsSecret(t *testing.T) {
	is := is.New(t)
	v := newVault(t)
	k, err := v.ImportOpenPGP(pgpKey(t, &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA}, false))
	is.NoErr(err)
	is.NoErr(v.Unlock("p", hub.CredentialOpenPGP, k.Sealed, nil))
	v.Lock("p")
	_, err = v.SignOpenPGP("p", []byte("x"))
	is.Equal(hub.MessageOf(err), "the OpenPGP key is locked") // unavailable at once
}
