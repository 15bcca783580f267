package credtools_test

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/credtools"
	"github.com/wharfhub/wharf/hub"
)

// The rows of the research's §9 table and of §13 item 11: for each tool,
// what an executable prints (stdout, stderr) and its exit status, and
// what the version layer then says. The executable prints the same
// whatever its argument: the genuine-tool scripts of the conformance
// suite check the argument.
var identifyRows = []struct {
	name           string
	tool           hub.CredentialToolName
	stdout, stderr string
	exit           int
	why            string // the version layer's message when not ready
	version        string // the version when ready
}{
	// ssh -V: "OpenSSH", exit 0
	{"ssh prints its version on stderr", hub.ToolSSH, "", "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026\n", 0, "", "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026"},
	{"ssh for Windows", hub.ToolSSH, "", "OpenSSH_for_Windows_9.5p1, LibreSSL 3.8.2\r\n", 0, "", "OpenSSH_for_Windows_9.5p1, LibreSSL 3.8.2"},
	{"ssh exiting 1 is not ssh", hub.ToolSSH, "", "OpenSSH_9.2p1\n", 1, hub.ToolMsgNoVersion, ""},
	{"/bin/false is not ssh", hub.ToolSSH, "", "", 1, hub.ToolMsgNoVersion, ""},
	{"/bin/true is not ssh", hub.ToolSSH, "", "", 0, hub.ToolMsgNoVersion, ""},
	{"blank lines are no version", hub.ToolSSH, "\n \n\t\n", "\x01\x02\n", 0, hub.ToolMsgNoVersion, ""},
	{"a line mentioning OpenSSH is not ssh", hub.ToolSSH, "", "this is not OpenSSH_9.2p1\n", 0, hub.ToolMsgNotIdentified, ""},
	{"OpenSSH without a version is not ssh", hub.ToolSSH, "", "OpenSSH_x\n", 0, hub.ToolMsgNotIdentified, ""},
	{"ssh on a later line is not ssh", hub.ToolSSH, "wrapper 1.0\n", "OpenSSH_9.2p1\n", 0, hub.ToolMsgNotIdentified, ""},

	// ssh-agent -?: "ssh-agent", exit 0, 1 or 2, no version
	{"ssh-agent's usage, exit 1", hub.ToolSSHAgent, "", "unknown option -- ?\nusage: ssh-agent [-c | -s] [-Dd] [-a bind_address]\n", 1, "", ""},
	{"ssh-agent's usage, exit 2", hub.ToolSSHAgent, "", "usage: ssh-agent [-c | -s] [-Dd]\n", 2, "", ""},
	{"ssh-agent's usage, exit 0", hub.ToolSSHAgent, "usage: ssh-agent [-c | -s]\n", "", 0, "", ""},
	{"ssh-agent's older usage", hub.ToolSSHAgent, "", "Usage: ssh-agent [options] [command [arg ...]]\n", 1, "", ""},
	{"ssh-agent exiting 3 is not ssh-agent", hub.ToolSSHAgent, "", "usage: ssh-agent [-c | -s]\n", 3, hub.ToolMsgNoVersion, ""},
	{"ssh-agent killed by a signal is not ssh-agent", hub.ToolSSHAgent, "", "usage: ssh-agent [-c | -s]\n", -9, hub.ToolMsgNoVersion, ""},
	{"/bin/false is not ssh-agent", hub.ToolSSHAgent, "", "", 1, hub.ToolMsgNotIdentified, ""},
	{"a mention of ssh-agent is not ssh-agent", hub.ToolSSHAgent, "", "ssh-agent: not found\nsee: usage: ssh-agent [-c]\n", 1, hub.ToolMsgNotIdentified, ""},
	{"another tool's usage is not ssh-agent", hub.ToolSSHAgent, "", "usage: ssh-keygen [-q]\n", 1, hub.ToolMsgNotIdentified, ""},
	{"a usage line without options is not ssh-agent", hub.ToolSSHAgent, "", "usage: ssh-agent is elsewhere\n", 1, hub.ToolMsgNotIdentified, ""},

	// ssh-add --help: "ssh-add", or the exact whole line without an agent
	{"ssh-add without an agent", hub.ToolSSHAdd, "", "Could not open a connection to your authentication agent.\n", 2, "", ""},
	{"ssh-add without an agent, CRLF", hub.ToolSSHAdd, "", "Could not open a connection to your authentication agent.\r\n", 2, "", ""},
	{"ssh-add's usage", hub.ToolSSHAdd, "", "usage: ssh-add [-cDdKkLlqvXx] [-E fingerprint_hash] [-H hostkey_file]\n", 1, "", ""},
	{"the phrase inside a line is not ssh-add", hub.ToolSSHAdd, "", "error: Could not open a connection to your authentication agent.\n", 2, hub.ToolMsgNotIdentified, ""},
	{"the phrase with more on its line is not ssh-add", hub.ToolSSHAdd, "", "Could not open a connection to your authentication agent. (not really)\n", 2, hub.ToolMsgNotIdentified, ""},
	{"a shorter phrase is not ssh-add", hub.ToolSSHAdd, "", "Could not open a connection to your authentication agent\n", 2, hub.ToolMsgNotIdentified, ""},
	{"/bin/false is not ssh-add", hub.ToolSSHAdd, "", "", 1, hub.ToolMsgNotIdentified, ""},

	// ssh-keygen -?: "ssh-keygen", exit 0, 1 or 2
	{"ssh-keygen's usage", hub.ToolSSHKeygen, "", "unknown option -- ?\nusage: ssh-keygen [-q] [-a rounds] [-b bits]\n", 1, "", ""},
	{"ssh-keygen exiting 255 is not ssh-keygen", hub.ToolSSHKeygen, "", "usage: ssh-keygen [-q]\n", 255, hub.ToolMsgNoVersion, ""},
	{"a mention of ssh-keygen is not ssh-keygen", hub.ToolSSHKeygen, "try ssh-keygen instead\n", "", 1, hub.ToolMsgNotIdentified, ""},

	// gpg, gpgconf --version: "GnuPG", exit 0
	{"gpg", hub.ToolGPG, "gpg (GnuPG) 2.2.40\nlibgcrypt 1.10.1\n", "", 0, "", "gpg (GnuPG) 2.2.40"},
	{"MacGPG", hub.ToolGPG, "gpg (GnuPG/MacGPG2) 2.2.41\n", "", 0, "", "gpg (GnuPG/MacGPG2) 2.2.41"},
	{"gpgconf", hub.ToolGPGConf, "gpgconf (GnuPG) 2.2.40\n", "", 0, "", "gpgconf (GnuPG) 2.2.40"},
	{"gpg is not gpgconf", hub.ToolGPGConf, "gpg (GnuPG) 2.2.40\n", "", 0, hub.ToolMsgNotIdentified, ""},
	{"a mention of GnuPG is not gpg", hub.ToolGPG, "frob 1.0 (works with GnuPG)\n", "", 0, hub.ToolMsgNotIdentified, ""},
	{"gpg without a version is not gpg", hub.ToolGPG, "gpg (GnuPG) unknown\n", "", 0, hub.ToolMsgNotIdentified, ""},
	{"gpg exiting 2 is not gpg", hub.ToolGPG, "gpg (GnuPG) 2.2.40\n", "", 2, hub.ToolMsgNoVersion, ""},

	// git --version: "git version", exit 0
	{"git", hub.ToolGit, "git version 2.39.5\n", "", 0, "", "git version 2.39.5"},
	{"Apple's git", hub.ToolGit, "git version 2.39.3 (Apple Git-145)\n", "", 0, "", "git version 2.39.3 (Apple Git-145)"},
	{"a mention of git version is not git", hub.ToolGit, "prints the git version 2.39.5\n", "", 0, hub.ToolMsgNotIdentified, ""},
	{"git version without a number is not git", hub.ToolGit, "git version\n", "", 0, hub.ToolMsgNotIdentified, ""},
	{"git exiting 1 is not git", hub.ToolGit, "git version 2.39.5\n", "", 1, hub.ToolMsgNoVersion, ""},

	// gh --version: "gh version", 2.0 or newer
	{"gh 2.0", hub.ToolGH, "gh version 2.0.0 (2021-08-23)\nhttps://github.com/cli/cli/releases/tag/v2.0.0\n", "", 0, "", "gh version 2.0.0 (2021-08-23)"},
	{"gh 2.45", hub.ToolGH, "gh version 2.45.0 (2024-03-04)\n", "", 0, "", "gh version 2.45.0 (2024-03-04)"},
	{"gh 1.14 is too old", hub.ToolGH, "gh version 1.14.0 (2021-08-04)\n", "", 0, hub.ToolMsgGitHubCLITooOld, ""},
	{"gh without its word version is not gh", hub.ToolGH, "gh 2.45.0\n", "", 0, hub.ToolMsgNotIdentified, ""},
	{"a mention of gh version is not gh", hub.ToolGH, "needs gh version 2.0\n", "", 0, hub.ToolMsgNotIdentified, ""},

	// glab --version: "glab", 1.22 or newer
	{"glab 1.22", hub.ToolGLab, "glab version 1.22.0 (2022-01-25)\n", "", 0, "", "glab version 1.22.0 (2022-01-25)"},
	{"glab 1.46, newer format", hub.ToolGLab, "glab 1.46.1 (58e5a5c5)\n", "", 0, "", "glab 1.46.1 (58e5a5c5)"},
	{"glab 2.0", hub.ToolGLab, "glab 2.0.0\n", "", 0, "", "glab 2.0.0"},
	{"glab 1.21 is too old", hub.ToolGLab, "glab version 1.21.9 (2022-01-10)\n", "", 0, hub.ToolMsgGitLabCLITooOld, ""},
	{"glab 0.9 is too old", hub.ToolGLab, "glab version 0.9.0\n", "", 0, hub.ToolMsgGitLabCLITooOld, ""},
	{"a mention of glab is not glab", hub.ToolGLab, "glab is not installed\n", "", 0, hub.ToolMsgNotIdentified, ""},

	// the version line: the first non-empty line, cleaned, at most 160 characters
	{"blank lines before the version", hub.ToolGit, "\n  \n\tgit version 2.39.5  \n", "", 0, "", "git version 2.39.5"},
	{"control characters are stripped", hub.ToolGit, "git version\x07 2.39.5\x00\x1b\x7f\u0085\n", "", 0, "", "git version 2.39.5"},
	{"format characters are stripped", hub.ToolGit, "git version 2.39.5\u202e\u200b\ufeff\n", "", 0, "", "git version 2.39.5"},
	{"bytes that are not UTF-8 are stripped", hub.ToolGit, "git version 2.39.5\xff\xfe\n", "", 0, "", "git version 2.39.5"},
	{"a long version is cut to 160 characters", hub.ToolGit, "git version 2." + strings.Repeat("é", 300) + "\n", "", 0, "", "git version 2." + strings.Repeat("é", 160-len("git version 2."))},
	{"stdout before stderr", hub.ToolGit, "git version 2.39.5\n", "warning: something\n", 0, "", "git version 2.39.5"},

	// output bounds: 8 KiB per stream
	{"8 KiB of stdout", hub.ToolGit, "git version 2.39.5\n" + strings.Repeat("x", 8192-19), "", 0, "", "git version 2.39.5"},
	{"one byte more than 8 KiB of stdout", hub.ToolGit, "git version 2.39.5\n" + strings.Repeat("x", 8192-18), "", 0, hub.ToolMsgTooLong, ""},
	{"one byte more than 8 KiB of stderr", hub.ToolSSH, "", "OpenSSH_9.2p1\n" + strings.Repeat("x", 8192-13), 0, hub.ToolMsgTooLong, ""},
}

func TestEveryToolIsIdentifiedByWhatItPrints(t *testing.T) {
	p := credtools.New(credtools.Options{})
	for _, row := range identifyRows {
		t.Run(row.name, func(t *testing.T) {
			is := is.New(t)
			exe := filepath.Join(t.TempDir(), "tool")
			printing(t, exe, row.stdout, row.stderr, row.exit)
			rec := p.Probe(t.Context(), row.tool, exe)
			is.Equal(rec.Results[0], hub.ReadinessResult{Layer: hub.LayerBinary, Status: hub.StatusReady, Message: hub.ToolMsgFound}) // found
			is.Equal(rec.Results[2], hub.ReadinessResult{Layer: hub.LayerRuntime, Status: hub.StatusNotApplicable, Message: hub.ToolMsgRuntimeNotTested})
			if row.why != "" {
				is.Equal(rec.Results[1], hub.ReadinessResult{Layer: hub.LayerVersion, Status: hub.StatusUnavailable, Message: row.why}) // why not
				is.Equal(rec.Version, "")                                                                                               // no version
				is.Equal(rec.Guidance, hub.ToolGuidance(row.tool, runtime.GOOS))                                                        // guidance
				return
			}
			msg := hub.ToolMsgVersionReported
			if !hub.ToolReportsVersion(row.tool) {
				msg = hub.ToolMsgResponded
			}
			is.Equal(rec.Results[1], hub.ReadinessResult{Layer: hub.LayerVersion, Status: hub.StatusReady, Message: msg}) // identified
			is.Equal(rec.Version, row.version)                                                                            // its version line
			is.Equal(rec.Guidance, "")                                                                                    // no guidance
		})
	}
}
