package local

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
)

// maxSignatureFile bounds a detached signature `wharf gpg --verify` reads.
const maxSignatureFile = 64 << 10

// verifyGPG checks a detached signature (g.files[0]) over the data
// (g.files[1], or stdin for "-" or none) against key, the session's own
// signing key (nil when none), and reports as gpg does: NEWSIG, then
// GOODSIG, VALIDSIG and TRUST_ULTIMATE (exit 0) for a good signature by
// key, BADSIG (exit 1) for a bad one, ERRSIG and NO_PUBKEY (exit 2) for
// another signer, NODATA (exit 2) for no signature. It reads at most
// maxSignatureFile of the signature and credenv.MaxSignBytes of the data.
func verifyGPG(g gpgArgs, key *openpgp.Entity, stdin io.Reader, stdout, stderr, status io.Writer) int {
	sigBytes, err := readBounded(g.files[0], nil, maxSignatureFile)
	if err != nil {
		fmt.Fprintln(stderr, "wharf gpg: the signature could not be read:", err)
		return 2
	}
	dataName := "-"
	if len(g.files) == 2 {
		dataName = g.files[1]
	}
	data, err := readBounded(dataName, stdin, credenv.MaxSignBytes)
	if err != nil {
		fmt.Fprintln(stderr, "wharf gpg: the signed data could not be read:", err)
		return 2
	}
	return reportVerification(key, sigBytes, data, time.Now(), stderr, status)
}

// reportVerification is verifyGPG once both inputs are read; now is the
// time keys and signatures are checked at.
func reportVerification(key *openpgp.Entity, sigBytes, data []byte, now time.Time, stderr, status io.Writer) int {
	sig, err := readSignature(sigBytes)
	if err != nil {
		fmt.Fprintln(status, "[GNUPG:] NODATA 4")
		fmt.Fprintln(stderr, "wharf gpg: no valid OpenPGP signature found")
		return 2
	}
	fmt.Fprintln(status, "[GNUPG:] NEWSIG")
	longID := "0000000000000000"
	if sig.IssuerKeyId != nil {
		longID = fmt.Sprintf("%016X", *sig.IssuerKeyId)
	}
	hashID, _ := openpgp.HashToHashId(sig.Hash)
	fmt.Fprintf(stderr, "wharf gpg: Signature made %s\n", sig.CreationTime.UTC().Format(time.RFC1123))
	var signer *openpgp.Entity
	if key != nil {
		bin, _ := dearmor(sigBytes)
		cfg := gpgVerifyConfig(now)
		signer, err = openpgp.CheckDetachedSignature(openpgp.EntityList{key}, bytes.NewReader(data), bytes.NewReader(bin), cfg)
	}
	fpr := issuerFingerprint(key, sig)
	switch {
	case key == nil || errors.Is(err, pgperrors.ErrUnknownIssuer) || (err == nil && signer != key):
		if fpr == "" {
			fpr = "-"
		}
		fmt.Fprintf(status, "[GNUPG:] ERRSIG %s %d %d %02x %d 9 %s\n", longID, sig.PubKeyAlgo, hashID, uint8(sig.SigType), sig.CreationTime.Unix(), fpr)
		fmt.Fprintf(status, "[GNUPG:] NO_PUBKEY %s\n", longID)
		fmt.Fprintf(stderr, "wharf gpg: Can't check signature: the key %s is not this session's signing key\n", longID)
		return 2
	case err != nil:
		fmt.Fprintf(status, "[GNUPG:] BADSIG %s %s\n", longID, userID(key))
		fmt.Fprintf(stderr, "wharf gpg: BAD signature from \"%s\"\n", userID(key))
		return 1
	}
	fmt.Fprintf(status, "[GNUPG:] GOODSIG %s %s\n", longID, userID(key))
	fmt.Fprintf(status, "[GNUPG:] VALIDSIG %s %s %d 0 %d 0 %d %d %02x %s\n", fpr, sig.CreationTime.UTC().Format("2006-01-02"),
		sig.CreationTime.Unix(), sig.Version, sig.PubKeyAlgo, hashID, uint8(sig.SigType), fingerprintHex(key.PrimaryKey.Fingerprint))
	fmt.Fprintln(status, "[GNUPG:] TRUST_ULTIMATE 0 pgp")
	fmt.Fprintf(stderr, "wharf gpg: Good signature from \"%s\" [ultimate] (this session's signing key)\n", userID(key))
	return 0
}

// gpgVerifyConfig checks keys and signatures as of now.
func gpgVerifyConfig(now time.Time) *packet.Config {
	return &packet.Config{Time: func() time.Time { return now }}
}

// userID is key's primary user id, on one line.
func userID(key *openpgp.Entity) string {
	if id := key.PrimaryIdentity(); id != nil {
		return strings.Map(func(r rune) rune {
			if r < ' ' || r == 0x7f {
				return ' '
			}
			return r
		}, id.Name)
	}
	return "[no user id]"
}

// dearmor returns the binary packets of an armored block, or b itself
// when it is not armored.
func dearmor(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("-----BEGIN ")) {
		return b, nil
	}
	block, err := armor.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(block.Body, maxSignatureFile))
}

// readBounded reads the file name ("-": stdin) whole, failing past max
// bytes.
func readBounded(name string, stdin io.Reader, max int) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, errors.New("cannot open it")
		}
		defer f.Close()
		r = f
	}
	if r == nil {
		return nil, errors.New("no input")
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("over %d bytes", max)
	}
	return b, nil
}
