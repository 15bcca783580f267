package local

import (
	"context"
	"net/http"
	"os"

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
	case <-s.done:
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

// OpenFeedVia opens a feed as a session does, through c (whose every
// connection reaches the session), with done standing for the session's
// end and maxEvent bounding one event's data.
func OpenFeedVia(ctx context.Context, c *http.Client, done <-chan struct{}, maxEvent int, req hub.FeedRequest) (hub.Feed, error) {
	return feedSource{client: c, done: done, maxEvent: maxEvent}.open(ctx, req)
}

// DataDirOf makes and returns the private data directory of workspace id.
func (b *Backend) DataDirOf(id string) (string, error) { return b.dataDir(id) }

// ProjectionDirOf is the runtime folder of workspace id's session.
func (b *Backend) ProjectionDirOf(id string) string { return b.projectionDir(id) }

// Exported for the tests of the projection's parts.
var (
	KeepUserSetting      = keepUserSetting
	ParseCredentialInput = func(b []byte) (protocol, host string, err error) {
		r, err := parseCredentialInput(b)
		return r.protocol, r.host, err
	}
)
