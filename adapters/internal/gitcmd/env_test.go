package gitcmd_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/gitcmd"
)

func TestEnv(t *testing.T) {
	t.Parallel()
	base := []string{
		"HOME=/home/ann", "GIT_DIR=/x", "GIT_WORK_TREE=/y", "GIT_CONFIG_GLOBAL=/z", "LANGUAGE=de",
		"LANG=de_DE.UTF-8", "LC_ALL=de_DE.UTF-8", "XDG_CONFIG_HOME=/home/ann/.config", "GITHUB_TOKEN=t",
	}
	kept := []string{"HOME=/home/ann", "XDG_CONFIG_HOME=/home/ann/.config", "GITHUB_TOKEN=t"}
	t.Run("the user's config applies", func(t *testing.T) {
		is := is.New(t)
		is.Equal(gitcmd.Env(base, false), append(kept,
			"LC_ALL=C", "LANG=C", "GIT_TERMINAL_PROMPT=0")) // GIT_* and the locale replaced; everything else kept in order
	})
	t.Run("isolated from the user's and the system's config", func(t *testing.T) {
		is := is.New(t)
		is.Equal(gitcmd.Env(base, true), append(kept,
			"LC_ALL=C", "LANG=C", "GIT_TERMINAL_PROMPT=0",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")) // and no global nor system config
	})
}
