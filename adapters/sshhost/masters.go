package sshhost

import (
	"context"
	"fmt"
	"net"
	"strings"
)

// A host's connections: a pool of masters. Each session holds a channel
// of a master for its life (the one its start script runs in), as does a
// process lent credentials (lend.go); sshd refuses a connection more
// channels than its MaxSessions (10 by default), and ssh then opens a
// connection of its own for each refused one: another login, which a
// FIDO key would ask to be touched for, and which sshd's MaxStartups
// drops when many arrive together. So the long-lived channels are spread
// over masters, each held below that bound: the primary (h.ctlPath),
// which also carries the operations' stream (Exec), every short command
// and the credentials' forwards, takes primarySessions; each further
// master, started when every one before it is full and kept until Close,
// sessionsPerMaster. A session's socket forward is its own master's (the
// forward is asked on its start's command line), and so is cancelled
// there.

// Bounds of the long-lived channels a master carries.
const (
	primarySessions   = 6
	sessionsPerMaster = 9
)

// master is one connection to the host.
type master struct {
	ctl  string // its control socket
	held int    // long-lived channels on it; guarded by Host.mu
}

// takeMaster returns a master with room for one more long-lived channel,
// connected, and counts the channel on it; giveMaster gives it back. The
// caller has connected the primary first (connect).
func (h *Host) takeMaster(ctx context.Context) (*master, error) {
	h.mu.Lock()
	var m *master
	for i, c := range h.masters {
		limit := sessionsPerMaster
		if i == 0 {
			limit = primarySessions
		}
		if c.held < limit {
			m = c
			break
		}
	}
	if m == nil {
		m = &master{ctl: fmt.Sprintf("%s-%d", h.ctlPath, len(h.masters))}
		h.masters = append(h.masters, m)
	}
	m.held++
	h.mu.Unlock()
	if m.ctl == h.ctlPath {
		return m, nil
	}
	if err := h.startMaster(ctx, m.ctl); err != nil {
		h.giveMaster(m)
		return nil, err
	}
	return m, nil
}

// giveMaster gives back a channel takeMaster counted on m.
func (h *Host) giveMaster(m *master) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m.held--
}

// startMaster starts the master of ctl unless it runs, and makes its
// connection interactive. A failure is the host's public error.
func (h *Host) startMaster(ctx context.Context, ctl string) error {
	h.connMu.Lock()
	defer h.connMu.Unlock()
	if h.closed {
		return errClosed
	}
	if h.masterUpAt(ctx, ctl) {
		return nil
	}
	var stderr boundedBuffer
	cmd := h.masterCommand(ctx, ctl)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return h.late(ctx)
		}
		err := h.connectFailure(err, stderr.String())
		h.log.Warn("the host could not be reached", "err", err)
		return err
	}
	h.interactive(ctx, ctl)
	return nil
}

// masterUp reports whether the primary master runs (masterUpAt).
func (h *Host) masterUp(ctx context.Context) bool { return h.masterUpAt(ctx, h.ctlPath) }

// masterUpAt reports whether the master of ctl runs: whether its control
// socket takes a connection. That is what `ssh -O check` learns too
// (neither tests the network: a partition is the keep-alive's to
// notice), without a process per start.
func (h *Host) masterUpAt(ctx context.Context, ctl string) bool {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", ctl)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// exitMasters ends every master that runs; the caller holds connMu.
func (h *Host) exitMasters(ctx context.Context) error {
	h.mu.Lock()
	ctls := make([]string, len(h.masters))
	for i, m := range h.masters {
		ctls[i] = m.ctl
	}
	h.mu.Unlock()
	var failed error
	for _, ctl := range ctls {
		if !h.masterUpAt(ctx, ctl) {
			continue
		}
		var stderr boundedBuffer
		cmd := h.controlCommand(ctx, ctl, "exit")
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			h.log.Warn("a master did not exit", "err", err, "stderr", strings.TrimSpace(stderr.String()))
			failed = err
		}
	}
	return failed
}
