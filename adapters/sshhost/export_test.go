package sshhost

import "github.com/wharfhub/wharf/hub"

// RemotePid is the pid (and process group) of a session's child on the
// host.
func RemotePid(rs hub.WorkspaceSession) int {
	if a, ok := rs.(*adoptedSession); ok {
		return int(a.pid)
	}
	return int(rs.(*session).pid.Load())
}

// Sockets are a session's forwarded socket on the Hub and its child's
// socket on the host, and its pid file there.
func Sockets(rs hub.WorkspaceSession) (local, remote, pidFile string) {
	s := rs.(*session)
	return s.lsock, s.rsock, s.pidFile
}

// Copies counts the binaries h copied to the host.
func (h *Host) Copies() int64 { return h.copies.Load() }

// Live counts sessions started and not yet ended.
func (h *Host) Live() int64 { return h.live.Load() }

// Expect makes h expect the host to run goos/goarch.
func (h *Host) Expect(goos, goarch string) { h.goos, h.goarch = goos, goarch }

// ControlPath is the master's control socket.
func (h *Host) ControlPath() string { return h.ctlPath }

// SSHArgs are the arguments every ssh process of h begins with.
func (h *Host) SSHArgs() []string { return h.sshPrefix() }

// RemoteLine is the command line h sends the host to run script with
// args.
func RemoteLine(script string, args ...string) string {
	return remoteLine(script, args)
}

// Classify names why ssh failed, from its stderr.
func Classify(stderr string) string {
	return [...]string{"other", "changed host key", "unknown host key", "login refused", "unreachable"}[classify(stderr)]
}

// RemoteSocket is a session's socket on the host.
func RemoteSocket(rs hub.WorkspaceSession) string { return rs.(*session).rsock }
