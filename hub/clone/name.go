package clone

import (
	"strings"
	"unicode"

	"github.com/wharfhub/wharf/hub"
)

var (
	errFolderName    = hub.Errorf(hub.Invalid, "checkout folder name must be a single folder name")
	errFolderLong    = hub.Errorf(hub.Invalid, "checkout folder name is longer than %d bytes", hub.MaxFolderNameBytes)
	errDerivedFolder = hub.Errorf(hub.Invalid, "the folder name derived from the clone URL is not a single folder name; give folderName")
)

// DeriveFolderName is the checkout folder a clone URL names when the
// request gives none (research §11.1): the URL trimmed, trailing '/'
// removed, its last part after a '/' or ':', without a trailing ".git".
// So `git@github.com:me/uatu.git` gives "uatu",
// `https://github.com/me/uatu.git/` "uatu", `/local/path/repo` "repo";
// a query is kept (`…/repo?x` gives "repo?x"), as the earlier system did.
//
// "", "." and ".." (`///`, `https://h/..`) are refused as the earlier
// system refused them: "a git clone URL is required". A name that then
// fails the project's FolderName rule (hub.CheckFolderName: a hidden
// ".name", a control or format character, over 255 bytes) is refused
// with a message asking for folderName, so a derived name is never less
// safe than a typed one.
func DeriveFolderName(url string) (string, error) {
	s := strings.TrimRight(strings.TrimSpace(url), "/")
	name := s[strings.LastIndexAny(s, "/:")+1:]
	name = strings.TrimSuffix(name, ".git")
	switch name {
	case "", ".", "..":
		return "", errURLRequired
	}
	if hub.CheckFolderName("folderName", name) != nil {
		return "", errDerivedFolder
	}
	return name, nil
}

// CheckFolderName checks a requested checkout folder name, trimmed of
// white space (and a byte-order mark) as clients trim: the FolderName
// rule (hub.CheckFolderName: one visible, non-hidden path segment without
// a separator, control or format character, at most 255 bytes), with the
// earlier system's message. "" is returned for a blank name, which the
// caller derives from the URL.
func CheckFolderName(name string) (string, error) {
	name = strings.TrimFunc(name, func(r rune) bool { return unicode.IsSpace(r) || r == '\uFEFF' })
	if name == "" {
		return "", nil
	}
	if hub.CheckFolderName("folderName", name) != nil {
		if len(name) > hub.MaxFolderNameBytes {
			return "", errFolderLong
		}
		return "", errFolderName
	}
	return name, nil
}
