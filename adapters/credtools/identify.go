package credtools

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wharfhub/wharf/hub"
)

// A tool's probe and what identifies it. Each rule reads a whole line from
// its start, never a phrase anywhere in the output: the earlier system
// matched substrings, and an executable that printed "this is not
// OpenSSH" passed as ssh (§13 of the research). A versioned tool's first
// line is its version line (ssh prints it on stderr, with nothing on
// stdout); the usage tools have no version option and print their usage
// on an unknown one, among other lines ("unknown option -- ?").

// probeArg is the one argument each tool is probed with.
var probeArg = map[hub.CredentialToolName]string{
	hub.ToolSSH:       "-V",
	hub.ToolSSHAgent:  "-?",
	hub.ToolSSHAdd:    "--help",
	hub.ToolSSHKeygen: "-?",
	hub.ToolGPG:       "--version",
	hub.ToolGPGConf:   "--version",
	hub.ToolGit:       "--version",
	hub.ToolGH:        "--version",
	hub.ToolGLab:      "--version",
}

// noAgentLine is what ssh-add prints, whatever its arguments, when it
// cannot reach an agent: a probe never has one (SSH_AUTH_SOCK is not in
// its environment), so this whole line identifies a real ssh-add, which
// then never prints its usage. The earlier system missed it, and every
// install read as without OpenSSH.
const noAgentLine = "Could not open a connection to your authentication agent."

// maxVersionLen bounds a reported version, in characters.
const maxVersionLen = 160

// versionLine is the version a probe's output reports: its first line
// that is not empty once control and format characters (and bytes that
// are not UTF-8) are removed and spaces trimmed, cut to maxVersionLen
// characters. "" when there is none.
func versionLine(stdout, stderr []byte) string {
	for _, line := range lines(stdout, stderr) {
		if v := sanitize(line); v != "" {
			return v
		}
	}
	return ""
}

// lines returns stdout's lines, then stderr's.
func lines(stdout, stderr []byte) []string {
	return append(strings.Split(string(stdout), "\n"), strings.Split(string(stderr), "\n")...)
}

// sanitize removes from line what could disguise it on a page (control
// characters, format characters such as bidi overrides, invalid UTF-8),
// trims spaces and cuts it to maxVersionLen characters.
func sanitize(line string) string {
	line = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, line)
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > maxVersionLen {
		line = strings.TrimSpace(string([]rune(line)[:maxVersionLen]))
	}
	return line
}

// identifies reports whether a probe's output (version is its version
// line) identifies tool.
func identifies(tool hub.CredentialToolName, version string, stdout, stderr []byte) bool {
	switch tool {
	case hub.ToolSSH:
		// "OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.19 27 Jan 2026",
		// "OpenSSH_for_Windows_9.5p1, LibreSSL 3.8.2"
		num, ok := strings.CutPrefix(version, "OpenSSH_")
		return ok && startsWithDigit(strings.TrimPrefix(num, "for_Windows_"))
	case hub.ToolGPG, hub.ToolGPGConf:
		// "gpg (GnuPG) 2.2.40", "gpg (GnuPG/MacGPG2) 2.2.41"
		rest, ok := strings.CutPrefix(version, string(tool)+" (GnuPG")
		if !ok {
			return false
		}
		_, num, ok := strings.Cut(rest, ") ")
		return ok && startsWithDigit(num)
	case hub.ToolGit:
		// "git version 2.39.5", "git version 2.39.3 (Apple Git-145)"
		num, ok := strings.CutPrefix(version, "git version ")
		return ok && startsWithDigit(num)
	case hub.ToolGH, hub.ToolGLab:
		_, _, ok := cliVersion(tool, version)
		return ok
	case hub.ToolSSHAgent, hub.ToolSSHKeygen, hub.ToolSSHAdd:
		for _, line := range lines(stdout, stderr) {
			line = strings.TrimSpace(line)
			if isUsage(line, string(tool)) || tool == hub.ToolSSHAdd && line == noAgentLine {
				return true
			}
		}
	}
	return false
}

// isUsage reports whether line is the first line of name's usage text, as
// OpenSSH prints it: "usage: ssh-keygen [-q] [-a rounds] …" (older
// releases wrote "Usage:").
func isUsage(line, name string) bool {
	if len(line) < len("usage: ") || !strings.EqualFold(line[:len("usage: ")], "usage: ") {
		return false
	}
	rest, ok := strings.CutPrefix(line[len("usage: "):], name+" ")
	return ok && strings.HasPrefix(strings.TrimLeft(rest, " "), "[")
}

// cliVersion reads the version a provider CLI's version line reports:
// "gh version 2.45.0 (2024-03-04)"; "glab version 1.22.0 (2022-01-25)" or,
// from 1.37 on, "glab 1.46.1 (58e5a5c5)".
func cliVersion(tool hub.CredentialToolName, line string) (major, minor int, ok bool) {
	rest, ok := strings.CutPrefix(line, string(tool)+" ")
	if !ok {
		return 0, 0, false
	}
	if r, cut := strings.CutPrefix(rest, "version "); cut {
		rest = r
	} else if tool == hub.ToolGH {
		return 0, 0, false
	}
	rest = strings.TrimPrefix(rest, "v")
	if i := strings.IndexAny(rest, " -+"); i >= 0 {
		rest = rest[:i]
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || !startsWithDigit(parts[0]) || !startsWithDigit(parts[1]) {
		return 0, 0, false
	}
	return major, minor, true
}

// tooOld returns the message for a provider CLI older than the Hub needs
// (gh 2.0, glab 1.22), or "".
func tooOld(tool hub.CredentialToolName, version string) string {
	major, minor, _ := cliVersion(tool, version)
	switch {
	case tool == hub.ToolGH && major < 2:
		return hub.ToolMsgGitHubCLITooOld
	case tool == hub.ToolGLab && (major < 1 || major == 1 && minor < 22):
		return hub.ToolMsgGitLabCLITooOld
	}
	return ""
}

func startsWithDigit(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }
