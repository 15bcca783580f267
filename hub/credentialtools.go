package hub

// What a ToolProber says of a tool (CredentialTool.Results), word for
// word the earlier system's texts (ToolMsgCancelled is ours), so that
// every prober (the real one, the fake) says the same. A found tool gets three layers (binary, then
// version, then runtime); a tool not found, or an override that no longer
// works, gets the binary layer alone.
const (
	// binary
	ToolMsgFound         = "Executable is available."
	ToolMsgNotFound      = "Executable was not found."
	ToolMsgOverrideStale = "The configured executable is missing, unsafe, or not executable."

	// version: ready
	ToolMsgVersionReported = "Compatible version was reported."
	ToolMsgResponded       = "Executable responded to the probe." // the usage tools: no version
	// version: unavailable
	ToolMsgNotStarted      = "Version probe could not start."
	ToolMsgTimedOut        = "Version probe timed out."
	ToolMsgCancelled       = "Version probe was cancelled." // the caller gave up first
	ToolMsgTooLong         = "Version probe exceeded the output limit."
	ToolMsgNoVersion       = "Executable did not report a compatible version."
	ToolMsgNotIdentified   = "Executable did not identify as the configured tool."
	ToolMsgGitHubCLITooOld = "GitHub CLI 2.0 or newer is required."
	ToolMsgGitLabCLITooOld = "GitLab CLI 1.22 or newer is required."

	// runtime: always not-applicable
	ToolMsgRuntimeNotTested = "Runtime readiness is tested when the capability is used."
)

// ToolReportsVersion says whether tool's probe reports a version: the
// usage tools (ssh-agent, ssh-add, ssh-keygen) have no version option, so
// they are identified by their usage text and their Version stays empty.
func ToolReportsVersion(tool CredentialToolName) bool {
	switch tool {
	case ToolSSHAgent, ToolSSHAdd, ToolSSHKeygen:
		return false
	}
	return true
}

// ToolGuidance is the Guidance of a tool that is not ready on the
// platform goos (runtime.GOOS of the Hub): the package to install and
// that an absolute override path is the other way.
func ToolGuidance(tool CredentialToolName, goos string) string {
	family := string(tool)
	switch tool {
	case ToolSSH, ToolSSHAgent, ToolSSHAdd, ToolSSHKeygen:
		family = "OpenSSH"
	case ToolGPG, ToolGPGConf:
		family = "GnuPG"
	}
	switch goos {
	case "darwin":
		return "Install " + family + " with a trusted macOS package manager, or configure its absolute executable path."
	case "linux":
		return "Install " + family + " with the system package manager, or configure its absolute executable path."
	}
	return "Install " + family + " for this platform, or configure its absolute executable path."
}
