package credenv_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/hub"
)

// TestAProjectionWithoutTheUsersConfigLendsWharfsSettingsAlone builds
// the projection a clone gets: an empty global config whatever the
// user's holds, a credential helper for the lent host only, and a
// folder that goes with Close.
func TestAProjectionWithoutTheUsersConfigLendsWharfsSettingsAlone(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	clock := fakes.NewClock(time.Unix(1e9, 0))
	for _, noUser := range []bool{false, true} {
		t.Run(map[bool]string{false: "a session's", true: "a clone's"}[noUser], func(t *testing.T) {
			is := is.New(t)
			home := t.TempDir()
			is.NoErr(os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Ann\n"), 0o600))
			dir := filepath.Join(t.TempDir(), "proj")
			p, err := credenv.Build(t.Context(), credenv.Options{
				Dir: dir, Command: []string{"/opt/wharf"}, NoUserConfig: noUser,
				Base: []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")},
				Credentials: hub.SessionCredentials{
					Logins: []hub.SessionLogin{{Host: "git.example", CredentialID: "t", Type: hub.CredentialToken, HTTPS: true}},
					Tools:  map[hub.CredentialToolName]string{hub.ToolGit: gitPath},
					Broker: fakes.NewSessionBroker(fakes.NewKeyVault(clock), clock),
				},
			})
			is.NoErr(err) // built
			cfg, err := os.ReadFile(filepath.Join(dir, "gitconfig"))
			is.NoErr(err)                                                                                                                             // the global config is there
			is.Equal(strings.Contains(string(cfg), "Ann"), !noUser)                                                                                   // with the user's settings, or none
			is.True(slices.Contains(p.Config(), gitcmd.Setting{Key: "credential.helper", Value: ""}))                                                 // every other helper reset
			is.True(slices.Contains(p.Config(), gitcmd.Setting{Key: "credential.https://git.example.helper", Value: "!'/opt/wharf' git-credential"})) // and Wharf's for the lent host
			is.True(slices.Contains(p.Vars(), credenv.CredentialsEnv+"="+dir))                                                                        // the credential socket named
			is.True(!slices.ContainsFunc(p.Vars(), func(kv string) bool { return strings.HasPrefix(kv, "GIT_CONFIG_COUNT=") }))                       // settings apart from the variables
			env := p.Apply([]string{"HOME=" + home, "NETRC=/x", "PATH=/bin"})
			is.True(slices.Contains(env, "GIT_CONFIG_KEY_0=credential.helper")) // Apply gives the settings as variables
			is.True(!slices.Contains(env, "NETRC=/x"))                          // and filters the base
			p.Close()
			_, err = os.Stat(dir)
			is.True(errors.Is(err, fs.ErrNotExist)) // the folder goes with Close
		})
	}
}

// TestAProjectionRefusesAFolderItsSSHConfigCannotName: ssh expands
// ${VAR} in the paths of ssh_config and a line break would end one of
// its lines, so Build refuses such a folder before making anything, for
// a clone's projection as for a session's.
func TestAProjectionRefusesAFolderItsSSHConfigCannotName(t *testing.T) {
	for _, name := range []string{"a${HOME}b", "a\nb", "a\tb"} {
		is := is.New(t)
		dir := filepath.Join(t.TempDir(), name)
		_, err := credenv.Build(t.Context(), credenv.Options{Dir: dir, Command: []string{"/opt/wharf"}})
		is.True(err != nil && strings.Contains(err.Error(), "ssh_config cannot name")) // refused, clearly
		_, err = os.Stat(dir)
		is.True(errors.Is(err, fs.ErrNotExist)) // before making anything
	}
}
