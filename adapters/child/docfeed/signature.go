package docfeed

import (
	"bytes"
	"context"
)

// Commit signatures. A commit's log entry says whether it is signed by the
// workspace's own signing key (the one the Hub lends the session), so a
// person sees at a glance that an agent's commits carry it. The feed never
// runs a signature program (gitcmd forbids the repository's, and the
// user's would be slow and prompt): it reads the newest commits' raw
// objects, takes each one's signature and signed payload apart, and asks
// the SignatureChecker the session was given, in process.

// SignatureChecker tells whether a signature of payload (a commit object
// without its signature) was made by the key the workspace signs with.
// Implementations are quick and safe for concurrent use.
type SignatureChecker interface {
	Check(payload, signature []byte) bool
}

// signatureChecks is how many of the newest commits have their signature
// checked: one git process each, on every refresh of the log.
const signatureChecks = 10

// maxCommitObject bounds the raw commit object read for its signature.
const maxCommitObject = 1 << 20

// commitSignature is a log entry's `signature`: present when the commit
// is signed and among the newest checked.
type commitSignature struct {
	// Status is "verified" (by the workspace's signing key) or
	// "unverified" (signed, but not verifiably by it).
	Status string `json:"status"`
}

// checkSignatures fills the signature of the newest commits of log, whose
// full ids are fulls, in place. A commit git cannot show keeps none.
func (g *gitRunner) checkSignatures(ctx context.Context, repo repoInfo, top string, log []commitLogEntry, fulls []string, chk SignatureChecker) {
	if chk == nil {
		return
	}
	for i := range min(len(log), len(fulls), signatureChecks) {
		raw, err := g.runOK(ctx, repo, top, "cat-file", "commit", fulls[i])
		if err != nil || len(raw) > maxCommitObject {
			continue
		}
		payload, sig, ok := splitSignature(raw)
		if !ok {
			continue // not signed
		}
		status := "unverified"
		if chk.Check(payload, sig) {
			status = "verified"
		}
		log[i].Signature = &commitSignature{Status: status}
	}
}

// splitSignature takes a raw commit object apart: its gpgsig header (the
// signature, continuation lines unindented) and the object without it
// (what was signed). ok is false for an unsigned commit.
func splitSignature(raw []byte) (payload, sig []byte, ok bool) {
	head, body, found := bytes.Cut(raw, []byte("\n\n"))
	if !found {
		head, body = raw, nil
	}
	var out, signature bytes.Buffer
	in := false
	for _, line := range bytes.SplitAfter(head, []byte("\n")) {
		switch {
		case in && bytes.HasPrefix(line, []byte(" ")):
			signature.Write(line[1:])
			continue
		case bytes.HasPrefix(line, []byte("gpgsig ")) && !ok:
			signature.Write(line[len("gpgsig "):])
			in, ok = true, true
			continue
		}
		in = false
		out.Write(line)
	}
	if !ok {
		return nil, nil, false
	}
	if found {
		if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
			out.WriteByte('\n')
		}
		out.WriteByte('\n')
		out.Write(body)
	}
	sigBytes := signature.Bytes()
	if !bytes.HasSuffix(sigBytes, []byte("\n")) {
		sigBytes = append(sigBytes, '\n')
	}
	return out.Bytes(), sigBytes, true
}
