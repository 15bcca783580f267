package docfeed

import (
	"testing"

	"github.com/matryer/is"
)

func TestASignedCommitSplitsIntoWhatWasSignedAndItsSignature(t *testing.T) {
	is := is.New(t)
	raw := "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n" +
		"author a <a@b> 1795779882 +0000\n" +
		"committer a <a@b> 1795779882 +0000\n" +
		"gpgsig -----BEGIN SSH SIGNATURE-----\n" +
		" U1NIU0lH\n" +
		" \n" +
		" -----END SSH SIGNATURE-----\n" +
		"\n" +
		"hi\n\nbody\n"
	payload, sig, ok := splitSignature([]byte(raw))
	is.True(ok) // signed
	is.Equal(string(payload), "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"+
		"author a <a@b> 1795779882 +0000\n"+
		"committer a <a@b> 1795779882 +0000\n"+
		"\n"+
		"hi\n\nbody\n") // the object without its signature
	is.Equal(string(sig), "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n\n-----END SSH SIGNATURE-----\n") // the signature, unindented

	_, _, ok = splitSignature([]byte("tree 4b82\nauthor a <a@b> 1 +0000\n\ngpgsig in the message\n"))
	is.True(!ok) // a message line is not a header
}
