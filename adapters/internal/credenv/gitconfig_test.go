package credenv_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/internal/credenv"
)

func TestTheUsersGitSettingsKeptAndDropped(t *testing.T) {
	t.Parallel()
	for key, keep := range map[string]bool{
		"user.name": true, "user.email": true, "core.editor": true, "alias.lg": true, "init.defaultbranch": true,
		"diff.tool": true, "merge.conflictstyle": true, "core.excludesfile": true, "http.sslcainfo": true,
		"gpg.ssh.allowedsignersfile": true, "filter.lfs.clean": true,
		"include.path": false, "includeif.gitdir:/x/.path": false, "credential.helper": false,
		"credential.https://h.helper": false, "http.extraheader": false, "http.https://h.extraheader": false,
		"http.sslverify": false, "http.proxy": false, "url.https://u:p@h/.insteadof": false,
		"remote.origin.url": false, "core.askpass": false, "core.sshcommand": false, "core.gitproxy": false,
		"user.signingkey": false, "commit.gpgsign": false, "gpg.program": false, "gpg.ssh.program": false,
		"gpg.ssh.defaultkeycommand": false, "sendemail.smtppass": false, "imap.pass": false,
		"lfs.url": false, "hub.oauthtoken": false, "github.token": false, "gitlab.password": false,
		"submodule.x.url": false, "svn-remote.svn.url": false, "noname": false,
	} {
		t.Run(key, func(t *testing.T) {
			is := is.New(t)
			is.Equal(credenv.KeepUserSetting(key), keep) // kept or dropped
		})
	}
}
