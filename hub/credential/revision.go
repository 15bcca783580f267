package credential

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// Projection is exactly what a workspace session is given of the Hub's
// credentials when it starts: its assignments, the records they name, a
// digest of each assigned token's sealed value, and the tools whose paths
// its generated configuration names. Its Revision, taken at start and
// again now, says whether the session's configuration is still current
// (credentialRestartRequired). It holds no secret.
type Projection struct {
	WorkspaceID string
	// Assignments are the workspace's, in the store's order.
	Assignments []hub.CredentialAssignment
	// Credentials are the records the assignments name, by id; an
	// assignment whose credential is gone names none.
	Credentials []hub.Credential
	// TokenDigests are the SHA-256 digests of each assigned token's sealed
	// value, by credential id: a token stored anew changes its digest (the
	// vault seals with a fresh nonce), without the value being read.
	TokenDigests map[string][sha256.Size]byte
	// Tools are the tools the session uses (ToolsUsed) with the path each
	// resolved to ("" when none was found). No other tool counts: a change
	// to a tool the session does not use leaves it current.
	Tools map[hub.CredentialToolName]string
}

// Project takes workspace workspaceID's projection from the catalog as it
// stands: digests are the SHA-256 digests of the sealed values of (at
// least) its assigned tokens, by credential id (DigestSeal), and toolPaths
// the path each tool resolves to now (override or PATH). A token without
// a digest digests as an empty seal.
func (c Catalog) Project(workspaceID string, digests map[string][sha256.Size]byte, toolPaths map[hub.CredentialToolName]string) Projection {
	p := Projection{
		WorkspaceID:  workspaceID,
		Assignments:  c.WorkspaceAssignments(workspaceID),
		TokenDigests: map[string][sha256.Size]byte{},
		Tools:        map[hub.CredentialToolName]string{},
	}
	for _, a := range p.Assignments {
		cred, ok := c.Credential(a.CredentialID)
		if !ok || slices.ContainsFunc(p.Credentials, func(x hub.Credential) bool { return x.ID == cred.ID }) {
			continue
		}
		p.Credentials = append(p.Credentials, cred)
		if cred.Type == hub.CredentialToken {
			d, ok := digests[cred.ID]
			if !ok {
				d = DigestSeal(nil)
			}
			p.TokenDigests[cred.ID] = d
		}
	}
	slices.SortFunc(p.Credentials, func(a, b hub.Credential) int { return strings.Compare(a.ID, b.ID) })
	for _, t := range ToolsUsed(p.Assignments, p.Credentials) {
		p.Tools[t] = toolPaths[t]
	}
	return p
}

// DigestSeal is the digest of a token's sealed value the projection
// keeps: a token stored anew changes it, and the value is never read.
func DigestSeal(sealed []byte) [sha256.Size]byte { return sha256.Sum256(sealed) }

// ToolsUsed lists the tools whose paths a session's generated
// configuration names, given its assignments and their credentials, in
// the contract's tool order: ssh and git always (GIT_SSH_COMMAND names ssh
// even when no key is lent, so that a session's ssh offers no key of the
// Hub user's; git runs through a wrapper that gives it a home of its
// own), ssh-keygen for an SSH signing default (git's gpg.ssh.program signs
// through the session's agent), gh and glab for a token for their CLI. An
// HTTPS token and an OpenPGP key add none: the Hub's own binary serves
// them (wharf git-credential, wharf gpg). The projection names exactly
// these, so the revision counts exactly these.
func ToolsUsed(assignments []hub.CredentialAssignment, credentials []hub.Credential) []hub.CredentialToolName {
	used := map[hub.CredentialToolName]bool{hub.ToolSSH: true, hub.ToolGit: true}
	for _, a := range assignments {
		i := slices.IndexFunc(credentials, func(c hub.Credential) bool { return c.ID == a.CredentialID })
		if i < 0 {
			continue
		}
		c := credentials[i]
		switch {
		case c.Type == hub.CredentialSSH && a.Role == hub.RoleAuthentication:
			used[hub.ToolSSH] = true
		case c.Type == hub.CredentialSSH && a.Role == hub.RoleSigning:
			used[hub.ToolSSHKeygen] = true
		case c.Type == hub.CredentialToken && a.Role == hub.RoleAuthentication:
			used[hub.ToolGH] = used[hub.ToolGH] || Has(c, hub.CapGitHubCLI)
			used[hub.ToolGLab] = used[hub.ToolGLab] || Has(c, hub.CapGitLabCLI)
		}
	}
	var out []hub.CredentialToolName
	for _, t := range hub.CredentialTools() {
		if used[t] {
			out = append(out, t)
		}
	}
	return out
}

// revisionVersion names the encoding Revision digests; a change to the
// encoding changes it, so revisions of two encodings never compare equal.
const revisionVersion = "wharf credential projection 1"

// Revision is a digest of everything in p (hex SHA-256 of a canonical,
// length-prefixed encoding: assignments in the store's order, records by
// id with every field, token digests and tools by name), so two
// projections have the same revision exactly when a session given one is
// given the other. Maps and input order do not matter.
func (p Projection) Revision() string {
	h := sha256.New()
	w := revisionWriter{h: h}
	w.str(revisionVersion)
	w.str(p.WorkspaceID)
	as := slices.Clone(p.Assignments)
	SortAssignments(as)
	w.num(len(as))
	for _, a := range as {
		w.str(a.WorkspaceID, a.CredentialID, string(a.Role), a.Host)
	}
	cs := slices.Clone(p.Credentials)
	slices.SortFunc(cs, func(a, b hub.Credential) int { return strings.Compare(a.ID, b.ID) })
	w.num(len(cs))
	for _, c := range cs {
		w.str(c.ID, c.Name, string(c.Type))
		w.num(len(c.Capabilities))
		for _, capability := range c.Capabilities {
			w.str(string(capability))
		}
		w.flag(c.Enabled)
		w.str(c.CreatedAt.UTC().Format(time.RFC3339Nano), c.PublicKey, c.Fingerprint, c.Host, c.Username)
		w.flag(c.Protected)
	}
	w.num(len(p.TokenDigests))
	for _, id := range slices.Sorted(maps.Keys(p.TokenDigests)) {
		d := p.TokenDigests[id]
		w.str(id, string(d[:]))
	}
	w.num(len(p.Tools))
	for _, t := range slices.Sorted(maps.Keys(p.Tools)) {
		w.str(string(t), p.Tools[t])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RestartRequired answers a workspace's credentialRestartRequired: it is
// running and its projection's revision now differs from the one it
// started with. A stopped workspace needs no restart; a running one whose
// start revision is unknown ("") does.
func RestartRequired(running bool, atStart, now string) bool {
	return running && atStart != now
}

// revisionWriter writes the canonical encoding: every string prefixed by
// its length, so no two sequences of fields encode alike.
type revisionWriter struct{ h hash.Hash }

func (w revisionWriter) num(n int) {
	w.h.Write(binary.AppendUvarint(nil, uint64(n)))
}

func (w revisionWriter) str(ss ...string) {
	for _, s := range ss {
		w.num(len(s))
		w.h.Write([]byte(s))
	}
}

func (w revisionWriter) flag(b bool) {
	if b {
		w.h.Write([]byte{1})
	} else {
		w.h.Write([]byte{0})
	}
}
