package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"
)

func TestTheSessionsCredentialCommandsAreDispatched(t *testing.T) {
	t.Run("git-credential outside a session offers nothing", func(t *testing.T) {
		is := is.New(t)
		var out, errOut bytes.Buffer
		err := run(testContext(t), []string{"git-credential", "get"}, func(string) string { return "" },
			strings.NewReader("protocol=https\nhost=git.example\n\n"), &out, &errOut)
		is.NoErr(err)                                                                  // git goes on
		is.Equal(out.Len(), 0)                                                         // without a credential
		is.True(strings.Contains(errOut.String(), "not in a Wharf workspace session")) // and is told why
	})
	t.Run("gpg exits with gpg's status", func(t *testing.T) {
		is := is.New(t)
		var out, errOut bytes.Buffer
		err := run(testContext(t), []string{"gpg", "--export-secret-keys"}, func(string) string { return "" },
			strings.NewReader(""), &out, &errOut)
		var status exitStatus
		is.True(errors.As(err, &status))                                           // an exit status, not a message
		is.Equal(int(status), 2)                                                   // gpg's for a usage error
		is.True(strings.Contains(errOut.String(), "unsupported gpg command line")) // said once, by wharf gpg
	})
}
