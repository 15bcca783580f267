package hub

import (
	"strings"
	"time"
	"unicode"
)

// Hosts: the other machines workspaces can live on. A workspace's Backend
// names where it runs: LocalBackend on the Hub's own machine, or
// HostBackend(name) on a configured host, reached over the system's ssh.
// A workspace's Path is a path on that machine.

// LocalBackend is the backend of workspaces on the Hub's own machine.
const LocalBackend = "local"

// hostBackendPrefix begins the backend name of every host.
const hostBackendPrefix = "ssh:"

// MaxHostNameLen bounds a host's name.
const MaxHostNameLen = 32

// maxDestinationLen bounds a host's destination; ssh's own limit on a
// host name is lower, so this only keeps records small.
const maxDestinationLen = 255

// Host is another machine workspaces can live on.
type Host struct {
	// Name names the host in the Hub (CheckHostName); its backend is
	// HostBackend(Name).
	Name string
	// Destination is what the system's ssh is given to reach it: an alias
	// of the Hub user's ~/.ssh/config, or [user@]host (CheckDestination).
	// Everything else (port, jump hosts, keys, known hosts) is ssh's own
	// configuration.
	Destination string
	AddedAt     time.Time
}

// HostBackend is the backend name of the host with this name.
func HostBackend(name string) string { return hostBackendPrefix + name }

// HostOfBackend returns the host name a backend name names, and whether
// it names one at all (LocalBackend does not).
func HostOfBackend(backend string) (string, bool) {
	return strings.CutPrefix(backend, hostBackendPrefix)
}

// CheckHostName refuses a name that is not 1-32 lowercase ASCII letters,
// digits and hyphens beginning with a letter or digit: names appear in
// backend names, URLs and file names, so they are kept plain.
func CheckHostName(name string) error {
	if name == "" || len(name) > MaxHostNameLen || name[0] == '-' {
		return Errorf(Invalid, "host name must be 1-%d lowercase letters, digits or hyphens, beginning with a letter or digit", MaxHostNameLen)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return Errorf(Invalid, "host name must be 1-%d lowercase letters, digits or hyphens, beginning with a letter or digit", MaxHostNameLen)
		}
	}
	return nil
}

// CheckDestination refuses a destination ssh could read as an option (a
// leading '-'), one holding spaces or control characters, and one over
// 255 bytes. It does not resolve it: ssh does, when the host is tested.
func CheckDestination(dest string) error {
	switch {
	case dest == "":
		return Errorf(Invalid, "destination is required: a host name, user@host, or an alias from ~/.ssh/config")
	case len(dest) > maxDestinationLen:
		return Errorf(Invalid, "destination must be at most %d bytes", maxDestinationLen)
	case dest[0] == '-':
		return Errorf(Invalid, "destination must not begin with '-'")
	}
	for _, r := range dest {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return Errorf(Invalid, "destination must not contain spaces or control characters")
		}
	}
	return nil
}

// HostView is a host as the Hub shows it: with its backend name and the
// workspaces that live on it.
type HostView struct {
	Host
	Backend    string
	Workspaces int
}
