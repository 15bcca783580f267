package credenv

import (
	"fmt"
	"net/netip"
	"strings"
)

// sshLogin is one SSH login the generated ssh_config offers a key for.
type sshLogin struct {
	// host is the normalized host (credential.NormalizeHost).
	host string
	// keyFile holds the key's public half: ssh asks the agent for exactly
	// that key.
	keyFile string
}

// sshConfig writes the session's ssh_config: one block per login
// offering its key alone, through the session's agent at agentSock, to
// its host (and, for a host with a port, that port only), then a final
// `Host *` that offers nothing, so a host no login names gets no key —
// not the agent's, not the user's default key files. ssh adds up every
// IdentityFile of every block that matches, so a block of a host without
// a port excludes the ports other logins claim on that host. Paths are
// quoted (sshQuote); hosts are normalized and so hold no character
// ssh_config treats specially. A knownHosts file, when given, is where
// ssh looks up and records host keys instead of the account's own.
func sshConfig(logins []sshLogin, agentSock, knownHosts string) []byte {
	var b strings.Builder
	b.WriteString("# Made by Wharf for one workspace session; removed when it ends.\n")
	claimed := map[string][]int{} // name -> ports claimed by logins with a port
	for _, l := range logins {
		if name, port := splitSSHHost(l.host); port != 0 {
			claimed[name] = append(claimed[name], port)
		}
	}
	for _, l := range logins {
		name, port := splitSSHHost(l.host)
		names := sshNames(name)
		switch {
		case port != 0:
			fmt.Fprintf(&b, "\nMatch host %s exec \"test %%p = %d\"\n", strings.Join(names, ","), port)
		case len(claimed[name]) > 0:
			fmt.Fprintf(&b, "\nMatch host %s", strings.Join(names, ","))
			for _, p := range claimed[name] {
				fmt.Fprintf(&b, " !exec \"test %%p = %d\"", p)
			}
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "\nHost %s\n", strings.Join(names, " "))
		}
		fmt.Fprintf(&b, "\tIdentityAgent %s\n\tIdentityFile %s\n\tIdentitiesOnly yes\n", sshQuote(agentSock), sshQuote(l.keyFile))
	}
	b.WriteString("\nHost *\n\tIdentityAgent none\n\tIdentityFile none\n\tIdentitiesOnly yes\n\tForwardAgent no\n")
	if knownHosts != "" {
		// No block above sets it, so this one holds for every host.
		fmt.Fprintf(&b, "\tUserKnownHostsFile %s\n", sshQuote(knownHosts))
	}
	return []byte(b.String())
}

// splitSSHHost splits a normalized host into the name ssh is given (an
// IPv6 address without its brackets) and its port, 0 when none.
func splitSSHHost(host string) (name string, port int) {
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		name, host = host[1:end], host[end+1:]
		if p, ok := strings.CutPrefix(host, ":"); ok {
			fmt.Sscanf(p, "%d", &port)
		}
		return name, port
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		fmt.Sscanf(host[i+1:], "%d", &port)
		return host[:i], port
	}
	return host, 0
}

// sshNames are the names ssh may be given for name: itself and, for a
// DNS name, its fully qualified form with a trailing dot (as in
// git@github.com.:org/repo).
func sshNames(name string) []string {
	if _, err := netip.ParseAddr(name); err == nil {
		return []string{name}
	}
	return []string{name, name + "."}
}

// sshQuote quotes a path for ssh_config: in double quotes, with `\` and
// `"` escaped and `%` doubled, since ssh expands %-tokens in
// IdentityFile and IdentityAgent.
func sshQuote(path string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `%`, `%%`)
	return `"` + r.Replace(path) + `"`
}
