package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
)

// `wharf gpg` is the signing program (gpg.program) of a session lent an
// OpenPGP signing key. It speaks the part of gpg's command line and
// status protocol git uses:
//
//	sign:   <program> --status-fd=2 -bsau <key>, the payload on stdin; the
//	        armored signature on stdout, "[GNUPG:] SIG_CREATED …" on the
//	        status fd. The signature is made by the Hub (the broker, over
//	        the credential socket); the private key never reaches the
//	        session.
//	verify: <program> --keyid-format=long --status-fd=1 --verify <sig> -;
//	        NEWSIG, then GOODSIG/VALIDSIG/TRUST_ULTIMATE, BADSIG, or
//	        ERRSIG and NO_PUBKEY, on the status fd. Only the session's own
//	        signing key is known (its public half, signing.asc in the
//	        runtime folder): every other signer is NO_PUBKEY.

// gpgMode is what a gpg command line asks for.
type gpgMode int

const (
	gpgSign gpgMode = iota + 1
	gpgVerify
)

// gpgArgs is a parsed gpg command line.
type gpgArgs struct {
	mode      gpgMode
	statusFD  int    // 0: no status output; else 1 or 2
	localUser string // the key to sign with (-u)
	files     []string
}

// errGPGUsage is a command line `wharf gpg` does not take; it quotes no
// argument.
var errGPGUsage = errors.New("unsupported gpg command line (wharf gpg signs and verifies for git only)")

// parseGPGArgs reads the options git passes (and the harmless ones
// around them): --status-fd, --keyid-format, -b/--detach-sign,
// -s/--sign, -a/--armor, -u/--local-user (short options may be grouped,
// as -bsau KEY), --verify with a signature file and "-" (or a file) for
// the data, --batch, --no-tty, --yes, -q/--quiet. Anything else fails:
// signing must be detached, armored and name a key.
func parseGPGArgs(args []string) (gpgArgs, error) {
	var g gpgArgs
	var detach, sign, armor, verify bool
	value := func(i *int, a, name string) (string, bool) {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
		if a == name && *i+1 < len(args) {
			*i++
			return args[*i], true
		}
		return "", false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if g.files != nil || a == "-" || !strings.HasPrefix(a, "-") {
			g.files = append(g.files, a)
			continue
		}
		if v, ok := value(&i, a, "--status-fd"); ok {
			n, err := strconv.Atoi(v)
			if err != nil || (n != 1 && n != 2) {
				return gpgArgs{}, errGPGUsage
			}
			g.statusFD = n
			continue
		}
		if _, ok := value(&i, a, "--keyid-format"); ok {
			continue
		}
		if v, ok := value(&i, a, "--local-user"); ok {
			g.localUser = v
			continue
		}
		switch a {
		case "--detach-sign":
			detach = true
		case "--sign":
			sign = true
		case "--armor":
			armor = true
		case "--verify":
			verify = true
		case "--batch", "--no-tty", "--yes", "--quiet":
		case "--":
			g.files = []string{}
		default:
			if strings.HasPrefix(a, "--") || len(a) < 2 {
				return gpgArgs{}, errGPGUsage
			}
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'b':
					detach = true
				case 's':
					sign = true
				case 'a':
					armor = true
				case 'q':
				case 'u':
					if rest := a[j+1:]; rest != "" {
						g.localUser = rest
					} else if i+1 < len(args) {
						i++
						g.localUser = args[i]
					} else {
						return gpgArgs{}, errGPGUsage
					}
					j = len(a)
				default:
					return gpgArgs{}, errGPGUsage
				}
			}
		}
	}
	switch {
	case verify && !detach && !sign && len(g.files) >= 1 && len(g.files) <= 2:
		g.mode = gpgVerify
	case !verify && detach && sign && armor && g.localUser != "" && len(g.files) == 0:
		g.mode = gpgSign
	default:
		return gpgArgs{}, errGPGUsage
	}
	return g, nil
}

// RunGPG is `wharf gpg …` and returns its exit status, as gpg's: 0 for a
// signature made or found good, 1 for a bad signature, 2 for anything
// else. Its messages go to stderr, prefixed "wharf gpg:", and never hold
// a secret.
func RunGPG(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	g, err := parseGPGArgs(args)
	if err != nil {
		fmt.Fprintln(stderr, "wharf gpg:", err)
		return 2
	}
	status := io.Discard
	switch g.statusFD {
	case 1:
		status = stdout
	case 2:
		status = stderr
	}
	dir := getenv(credenv.CredentialsEnv)
	key, keyErr := sessionSigningKey(dir)
	if g.mode == gpgVerify {
		return verifyGPG(g, key, stdin, stdout, stderr, status)
	}
	if keyErr != nil || dir == "" {
		fmt.Fprintln(stderr, "wharf gpg: no OpenPGP signing key is lent to this session")
		fmt.Fprintln(status, "[GNUPG:] FAILURE sign 17")
		return 2
	}
	if !keyMatches(key, g.localUser) {
		fmt.Fprintln(stderr, "wharf gpg: the key git names is not this session's signing key")
		fmt.Fprintln(status, "[GNUPG:] INV_SGNR 9", g.localUser)
		fmt.Fprintln(status, "[GNUPG:] FAILURE sign 17")
		return 2
	}
	data, err := io.ReadAll(io.LimitReader(stdin, credenv.MaxSignBytes+1))
	if err != nil || len(data) > credenv.MaxSignBytes {
		fmt.Fprintf(stderr, "wharf gpg: the data to sign could not be read whole (at most %d bytes)\n", credenv.MaxSignBytes)
		return 2
	}
	sig, ok, err := credenv.Sign(ctx, dir, data)
	if err != nil || !ok {
		if err == nil {
			err = errors.New("the Hub made no signature (the key is locked, disabled or no longer assigned)")
		}
		fmt.Fprintln(stderr, "wharf gpg: signing failed:", err)
		fmt.Fprintln(status, "[GNUPG:] FAILURE sign 17")
		return 2
	}
	p, err := readSignature(sig)
	if err != nil {
		fmt.Fprintln(stderr, "wharf gpg: the Hub's signature could not be read")
		return 2
	}
	fpr := issuerFingerprint(key, p)
	hashID, _ := openpgp.HashToHashId(p.Hash)
	fmt.Fprintf(status, "[GNUPG:] KEY_CONSIDERED %s 0\n", fingerprintHex(key.PrimaryKey.Fingerprint))
	fmt.Fprintf(status, "[GNUPG:] BEGIN_SIGNING H%d\n", hashID)
	if _, err := stdout.Write(sig); err != nil {
		return 2
	}
	fmt.Fprintf(status, "[GNUPG:] SIG_CREATED D %d %d %02x %d %s\n", p.PubKeyAlgo, hashID, uint8(p.SigType), p.CreationTime.Unix(), fpr)
	return 0
}

// sessionSigningKey reads the signing key's public half from the runtime
// folder dir.
func sessionSigningKey(dir string) (*openpgp.Entity, error) {
	if dir == "" {
		return nil, os.ErrNotExist
	}
	f, err := os.Open(filepath.Join(dir, credenv.SigningKeyFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	list, err := openpgp.ReadArmoredKeyRing(io.LimitReader(f, 1<<20))
	if err != nil || len(list) != 1 {
		return nil, errors.New("the session's signing key cannot be read")
	}
	return list[0], nil
}

// keyMatches reports whether user, as gpg's -u takes it (a fingerprint or
// a long or short key id, in hex with or without 0x, an optional "!"
// suffix), names key or one of its subkeys.
func keyMatches(key *openpgp.Entity, user string) bool {
	u := strings.ToUpper(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(user, "0x"), "0X"), "!"))
	if len(u) != 8 && len(u) != 16 && len(u) != 40 && len(u) != 64 {
		return false
	}
	keys := []*packet.PublicKey{key.PrimaryKey}
	for _, s := range key.Subkeys {
		keys = append(keys, s.PublicKey)
	}
	for _, k := range keys {
		if fp := fingerprintHex(k.Fingerprint); strings.HasSuffix(fp, u) {
			return true
		}
	}
	return false
}

// readSignature reads one signature packet from an armored (or binary)
// detached signature.
func readSignature(b []byte) (*packet.Signature, error) {
	bin, err := dearmor(b)
	if err != nil {
		return nil, err
	}
	pkt, err := packet.NewReader(bytes.NewReader(bin)).Next()
	if err != nil {
		return nil, err
	}
	sig, ok := pkt.(*packet.Signature)
	if !ok {
		return nil, errors.New("not a signature")
	}
	return sig, nil
}

// issuerFingerprint is the fingerprint of the key that made sig: its
// issuer fingerprint, or the key of key with its issuer id.
func issuerFingerprint(key *openpgp.Entity, sig *packet.Signature) string {
	if len(sig.IssuerFingerprint) > 0 {
		return fingerprintHex(sig.IssuerFingerprint)
	}
	if sig.IssuerKeyId != nil && key != nil {
		for _, k := range (openpgp.EntityList{key}).KeysById(*sig.IssuerKeyId) {
			return fingerprintHex(k.PublicKey.Fingerprint)
		}
	}
	return ""
}

// fingerprintHex is a fingerprint as gpg prints it: upper-case hex.
func fingerprintHex(fp []byte) string { return strings.ToUpper(fmt.Sprintf("%x", fp)) }
