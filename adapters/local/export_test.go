package local

import (
	"bytes"
	"context"
	"os"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/wharfhub/wharf/hub"
)

// Pid is the process id of a running session's child.
func Pid(rs hub.WorkspaceSession) int { return rs.(*workspaceSession).pid }

// SocketOf is the socket path of a running session.
func SocketOf(rs hub.WorkspaceSession) string { return rs.(*workspaceSession).sock }

// ExitState is how the child of rs ended; nil until Done is closed.
func ExitState(rs hub.WorkspaceSession) *os.ProcessState {
	s := rs.(*workspaceSession)
	select {
	case <-s.Done():
		return s.state
	default:
		return nil
	}
}

// Live counts children spawned and not yet reaped.
func (b *Backend) Live() int64 { return b.live.Load() }

// OnSpawn makes b report the pid of every child it spawns; set it before
// the first Start.
func (b *Backend) OnSpawn(f func(pid int)) { b.spawned = f }

// DataDirOf makes and returns the private data directory of workspace id.
func (b *Backend) DataDirOf(id string) (string, error) { return b.dataDir(id) }

// ProjectionDirOf is the runtime folder of workspace id's session.
func (b *Backend) ProjectionDirOf(id string) string { return b.projectionDir(id) }

// GPGArgs is a parsed gpg command line, for the tests.
type GPGArgs struct {
	Sign, Verify bool
	StatusFD     int
	LocalUser    string
	Files        []string
}

// ParseGPGArgs parses a gpg command line as wharf gpg does.
func ParseGPGArgs(args []string) (GPGArgs, error) {
	g, err := parseGPGArgs(args)
	return GPGArgs{Sign: g.mode == gpgSign, Verify: g.mode == gpgVerify, StatusFD: g.statusFD, LocalUser: g.localUser, Files: g.files}, err
}

// VerifyGPG is wharf gpg --verify of sig over data against the armored
// public key (none when ""), at now: its exit status, status lines and
// messages.
func VerifyGPG(armoredKey string, sig, data []byte, now time.Time) (code int, status, messages string) {
	var key *openpgp.Entity
	if armoredKey != "" {
		list, err := openpgp.ReadArmoredKeyRing(strings.NewReader(armoredKey))
		if err != nil || len(list) != 1 {
			panic("a test key that does not read")
		}
		key = list[0]
	}
	var st, msg bytes.Buffer
	code = reportVerification(key, sig, data, now, &msg, &st)
	return code, st.String(), msg.String()
}

// Project builds the projection of spec in base's environment and
// returns the child's environment and what closes it.
func (b *Backend) Project(ctx context.Context, spec hub.WorkspaceSessionSpec, base []string) ([]string, func(), error) {
	p, err := b.project(ctx, spec, base)
	if err != nil {
		return nil, nil, err
	}
	return p.Apply(base), p.Close, nil
}
