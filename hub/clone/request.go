package clone

import (
	"path"
	"strings"
	"unicode"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/credential"
)

// Checked is a CreateCloneJobRequest that passed CheckRequest, in the
// forms the job uses.
type Checked struct {
	Source Source
	// Dest is the request's absolute dest, cleaned (not yet resolved:
	// the service resolves it to its canonical path, checks it is an
	// existing directory and reserves Target under it).
	Dest string
	// FolderName is the requested name or the one derived from the URL.
	FolderName string
	// DisplayName is the requested one, normalized, or the folder's.
	DisplayName string
	// CredentialID is the clone's credential, "" for none.
	CredentialID string
	// Retained are the authentication defaults to commit with the
	// registration: the request's retainedAuthentication, then, for the
	// legacy retainAssignment, CredentialID for the clone's host.
	Retained []hub.AuthenticationSelection
	Signing  string
	Start    bool
}

// Target is the checkout folder under dest, the canonical form of Dest
// the service resolved.
func (c Checked) Target(dest string) string { return path.Join(dest, c.FolderName) }

var (
	errDest            = hub.Errorf(hub.Invalid, "an absolute destination directory is required")
	errDestControl     = hub.Errorf(hub.Invalid, "destination directory must not contain control characters")
	errDestLong        = hub.Errorf(hub.Invalid, "destination directory is longer than %d bytes", hub.MaxPathBytes)
	errRetainNoCred    = hub.Errorf(hub.Invalid, "retainAssignment requires credentialId")
	errNeedsSSHOrHTTPS = hub.Errorf(hub.Invalid, "selected credentials require an SSH or HTTPS clone URL")
)

// CheckRequest checks every field of a clone request before anything
// runs, in the earlier system's order (research §11.1), so the first
// fault named is the one it named:
//
//  1. url (CheckURL); when folderName is blank the folder name must
//     derive from it (DeriveFolderName);
//  2. dest: absolute ("an absolute destination directory is required"),
//     no control character, at most hub.MaxPathBytes;
//  3. folderName (CheckFolderName): "..", "a/b", control and format
//     characters refused;
//  4. displayName: blank is the folder's name (hub.DefaultDisplayName),
//     else hub.NormalizeDisplayName;
//  5. credentialId: "" or a credential id's shape (credential.CheckID);
//  6. retainAssignment: requires credentialId, an SSH or HTTPS URL and a
//     host an assignment can name ("selected credential cannot retain an
//     assignment for this clone host: <host>").
//
// What needs the catalog or the disk is the service's, also before any
// process: the credential's fit (CredentialFits), the retained
// selections and signing (credential.Catalog.Onboard, which checks their
// ids, hosts and conflicts), dest's existence and the reservation.
func CheckRequest(req hub.CreateCloneJobRequest) (Checked, error) {
	src, err := CheckURL(req.URL)
	if err != nil {
		return Checked{}, err
	}
	c := Checked{Source: src, CredentialID: req.CredentialID, Signing: req.Signing, Start: req.Start}
	if err := checkDest(req.Dest); err != nil {
		return Checked{}, err
	}
	c.Dest = path.Clean(req.Dest)
	if c.FolderName, err = CheckFolderName(req.FolderName); err != nil {
		return Checked{}, err
	}
	if c.FolderName == "" {
		if c.FolderName, err = DeriveFolderName(src.URL); err != nil {
			return Checked{}, err
		}
	}
	if c.DisplayName, err = displayName(req.DisplayName, c.FolderName); err != nil {
		return Checked{}, err
	}
	if req.CredentialID != "" {
		if err := credential.CheckID(req.CredentialID); err != nil {
			return Checked{}, err
		}
	}
	c.Retained = append([]hub.AuthenticationSelection(nil), req.RetainedAuthentication...)
	if req.RetainAssignment {
		switch {
		case req.CredentialID == "":
			return Checked{}, errRetainNoCred
		case src.Transport == TransportOther:
			return Checked{}, errNeedsSSHOrHTTPS
		case !src.Assignable:
			return Checked{}, hub.Errorf(hub.Invalid, "selected credential cannot retain an assignment for this clone host: %s", src.Host)
		}
		c.Retained = append(c.Retained, hub.AuthenticationSelection{CredentialID: req.CredentialID, Host: src.Host})
	}
	return c, nil
}

func checkDest(dest string) error {
	switch {
	case !path.IsAbs(dest):
		return errDest
	case len(dest) > hub.MaxPathBytes:
		return errDestLong
	case strings.IndexFunc(dest, func(r rune) bool { return unicode.Is(unicode.Cc, r) }) >= 0:
		return errDestControl
	}
	return nil
}

func displayName(name, folder string) (string, error) {
	if strings.TrimFunc(name, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' }) == "" {
		return hub.DefaultDisplayName(folder), nil
	}
	return hub.NormalizeDisplayName(name)
}
