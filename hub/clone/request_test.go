package clone_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
	"github.com/wharfhub/wharf/hub/clone"
)

const credID = "0b8f4f8e-3c1a-4f55-9d44-1f6f3f7a9d21"

// TestEveryFieldOfACloneRequestIsCheckedInTheEarlierSystemsOrder copies
// research §11.1's steps and the "bad input" rows: each a status
// and a message, the first fault in the earlier order winning.
func TestEveryFieldOfACloneRequestIsCheckedInTheEarlierSystemsOrder(t *testing.T) {
	ok := hub.CreateCloneJobRequest{URL: "git@github.com:me/uatu.git", Dest: "/srv/code"}
	with := func(f func(*hub.CreateCloneJobRequest)) hub.CreateCloneJobRequest {
		r := ok
		f(&r)
		return r
	}
	for _, tc := range []struct {
		row     string
		req     hub.CreateCloneJobRequest
		refusal string
	}{
		{"a plain request", ok, ""},
		{"2 no url", with(func(r *hub.CreateCloneJobRequest) { r.URL = "" }), "a git clone URL is required"},
		{"2 an underivable url", with(func(r *hub.CreateCloneJobRequest) { r.URL = "///" }), "a git clone URL is required"},
		{"2 an underivable url with a folderName", with(func(r *hub.CreateCloneJobRequest) { r.URL = "/srv/.."; r.FolderName = "x" }), ""},
		{"2 embedded credentials", with(func(r *hub.CreateCloneJobRequest) { r.URL = "https://u:tok@h/r" }), "clone URL must not contain embedded credentials"},
		{"2 the URL before dest", with(func(r *hub.CreateCloneJobRequest) { r.URL = "ext::sh"; r.Dest = "rel" }), "clone URL must not name a Git remote helper (<transport>::<address>)"},
		{"3 a relative dest", with(func(r *hub.CreateCloneJobRequest) { r.Dest = "code" }), "an absolute destination directory is required"},
		{"3 an empty dest", with(func(r *hub.CreateCloneJobRequest) { r.Dest = "" }), "an absolute destination directory is required"},
		{"3 a dest with a NUL", with(func(r *hub.CreateCloneJobRequest) { r.Dest = "/srv/\x00" }), "destination directory must not contain control characters"},
		{"3 a dest over PATH_MAX", with(func(r *hub.CreateCloneJobRequest) { r.Dest = "/" + strings.Repeat("a", 4095) }), "destination directory is longer than 4095 bytes"},
		{"3 dest before folderName", with(func(r *hub.CreateCloneJobRequest) { r.Dest = "code"; r.FolderName = ".." }), "an absolute destination directory is required"},
		{"4 folderName ..", with(func(r *hub.CreateCloneJobRequest) { r.FolderName = ".." }), "checkout folder name must be a single folder name"},
		{"4 folderName a/b", with(func(r *hub.CreateCloneJobRequest) { r.FolderName = "a/b" }), "checkout folder name must be a single folder name"},
		{"4 folderName with a control character", with(func(r *hub.CreateCloneJobRequest) { r.FolderName = "a\x1bb" }), "checkout folder name must be a single folder name"},
		{"4 folderName with a format character", with(func(r *hub.CreateCloneJobRequest) { r.FolderName = "a\u200db" }), "checkout folder name must be a single folder name"},
		{"4 folderName before displayName", with(func(r *hub.CreateCloneJobRequest) { r.FolderName = ".."; r.DisplayName = "\x00" }), "checkout folder name must be a single folder name"},
		{"displayName with a control character", with(func(r *hub.CreateCloneJobRequest) { r.DisplayName = "a\nb" }), "workspace display name must not contain control characters"},
		{"displayName with a bidi override", with(func(r *hub.CreateCloneJobRequest) { r.DisplayName = "\u202eab" }), "workspace display name must not contain format characters (zero-width, bidi or byte-order marks)"},
		{"displayName of 65 characters", with(func(r *hub.CreateCloneJobRequest) { r.DisplayName = strings.Repeat("x", 65) }), "workspace display name must be at most 64 characters"},
		{"displayName before credentialId", with(func(r *hub.CreateCloneJobRequest) { r.DisplayName = "a\nb"; r.CredentialID = "a b" }), "workspace display name must not contain control characters"},
		{"5 a malformed credentialId", with(func(r *hub.CreateCloneJobRequest) { r.CredentialID = "a/b" }), "credential id is invalid"},
		{"5 a blank credentialId", with(func(r *hub.CreateCloneJobRequest) { r.CredentialID = " " }), "credential id is invalid"},
		{"5 retainAssignment without credentialId", with(func(r *hub.CreateCloneJobRequest) { r.RetainAssignment = true }), "retainAssignment requires credentialId"},
		{"6 retainAssignment for an alias host", with(func(r *hub.CreateCloneJobRequest) {
			r.URL, r.CredentialID, r.RetainAssignment = "work_box:me/r.git", credID, true
		}), "selected credential cannot retain an assignment for this clone host: work_box"},
		{"6 retainAssignment for a local path", with(func(r *hub.CreateCloneJobRequest) {
			r.URL, r.CredentialID, r.RetainAssignment = "/srv/r.git", credID, true
		}), "selected credentials require an SSH or HTTPS clone URL"},
	} {
		t.Run(tc.row, func(t *testing.T) {
			is := is.New(t)
			c, err := clone.CheckRequest(tc.req)
			refused(is, err, hub.Invalid, tc.refusal)
			if tc.refusal != "" {
				is.Equal(c.FolderName, "") // nothing checked is answered
			}
		})
	}
}

func TestACheckedRequestCarriesTheFormsTheJobUses(t *testing.T) {
	is := is.New(t)
	sel := hub.AuthenticationSelection{CredentialID: "other-id", Host: "gitlab.com"}
	c, err := clone.CheckRequest(hub.CreateCloneJobRequest{
		URL: " git@GitHub.com.:me/uatu.git ", Dest: "/srv/a/../code/", CredentialID: credID,
		RetainedAuthentication: []hub.AuthenticationSelection{sel}, Signing: credID, Start: true, RetainAssignment: true,
	})
	is.NoErr(err)
	is.Equal(c.Source.URL, "git@GitHub.com.:me/uatu.git")                                                // trimmed
	is.Equal(c.Source.Host, "github.com")                                                                // normalized
	is.Equal(c.Dest, "/srv/code")                                                                        // cleaned
	is.Equal(c.FolderName, "uatu")                                                                       // derived
	is.Equal(c.DisplayName, "uatu")                                                                      // the folder's
	is.Equal(c.Target("/real/code"), "/real/code/uatu")                                                  // under the resolved dest
	is.Equal(c.Retained, []hub.AuthenticationSelection{sel, {CredentialID: credID, Host: "github.com"}}) // the legacy retention joins the selections
	is.Equal(c.Signing, credID)                                                                          // signing kept
	is.True(c.Start)                                                                                     // start kept

	c, err = clone.CheckRequest(hub.CreateCloneJobRequest{URL: "/srv/r", Dest: "/srv", FolderName: " my-checkout ", DisplayName: "  My checkout "})
	is.NoErr(err)
	is.Equal(c.FolderName, "my-checkout")  // trimmed
	is.Equal(c.DisplayName, "My checkout") // normalized
	is.Equal(len(c.Retained), 0)           // a credential selection alone retains nothing

	c, err = clone.CheckRequest(hub.CreateCloneJobRequest{URL: "/srv/" + strings.Repeat("r", 70), Dest: "/srv", DisplayName: " "})
	is.NoErr(err)
	is.Equal(c.DisplayName, strings.Repeat("r", 64)) // a blank display name is the folder's, cut to 64
}
