package service

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/wharfhub/wharf/hub"
)

// The hosts family: the other machines workspaces live on. Adding a host
// tests it first (the connection, its host key, the login, its operating
// system and architecture), so a host in the list is one the Hub reached
// at least once; removing one is refused while a workspace lives there.

// hostCheckTimeout bounds a host's connection test: ssh's own connect
// timeout, a login and a copy of the Hub's binary fit in it.
const hostCheckTimeout = 60 * time.Second

// Hosts lists the configured hosts with the number of workspaces on each.
func (h *Hub) Hosts(ctx context.Context) ([]hub.HostView, error) {
	var hosts []hub.Host
	var ws []hub.Workspace
	err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		if hosts, err = tx.Hosts(); err != nil {
			return err
		}
		ws, err = tx.Workspaces()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]hub.HostView, len(hosts))
	for i, host := range hosts {
		out[i] = hub.HostView{Host: host, Backend: hub.HostBackend(host.Name), Workspaces: countOn(ws, hub.HostBackend(host.Name))}
	}
	return out, nil
}

// countOn counts the workspaces of ws on backend.
func countOn(ws []hub.Workspace, backend string) int {
	n := 0
	for _, w := range ws {
		if w.Backend == backend {
			n++
		}
	}
	return n
}

// AddHost tests the host at destination and, when the Hub reaches it and
// workspaces can run there, stores it under name. A failed test stores
// nothing and says why (Unavailable); a taken name is a Conflict.
func (h *Hub) AddHost(ctx context.Context, name, destination string) (hub.HostView, error) {
	if err := hub.CheckHostName(name); err != nil {
		return hub.HostView{}, err
	}
	if err := hub.CheckDestination(destination); err != nil {
		return hub.HostView{}, err
	}
	if h.hosts.connector == nil {
		return hub.HostView{}, errNoHosts
	}
	if err := h.store.View(ctx, func(tx hub.Tx) error {
		_, err := tx.Host(name)
		return err
	}); err == nil {
		return hub.HostView{}, hub.Errorf(hub.Conflict, "a host named %q already exists", name)
	} else if hub.KindOf(err) != hub.NotFound {
		return hub.HostView{}, err
	}
	host := hub.Host{Name: name, Destination: destination, AddedAt: h.clock.Now()}
	if err := h.testHost(ctx, host); err != nil {
		// Not stored: nothing may keep a connection to it (a master
		// that came up before a later step failed, say).
		h.hosts.drop(name)
		return hub.HostView{}, err
	}
	if err := h.commit(ctx, func(tx *writes) error { return tx.CreateHost(host) }); err != nil {
		return hub.HostView{}, err
	}
	h.log.LogAttrs(ctx, slog.LevelInfo, "host added", slog.String("host", name))
	return hub.HostView{Host: host, Backend: hub.HostBackend(name)}, nil
}

// CheckHost tests a configured host again.
func (h *Hub) CheckHost(ctx context.Context, name string) error {
	var host hub.Host
	if err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		host, err = tx.Host(name)
		return err
	}); err != nil {
		return err
	}
	return h.testHost(ctx, host)
}

// testHost connects host (a connection kept for its use when it is
// stored) and checks it within hostCheckTimeout.
func (h *Hub) testHost(ctx context.Context, host hub.Host) error {
	hp, err := h.hosts.connect(host)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hostCheckTimeout)
	defer cancel()
	if err := hp.Check(ctx); err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "host check failed", slog.String("host", host.Name), slog.Any("err", err))
		if hub.MessageOf(err) == "" || hub.KindOf(err) == hub.Internal {
			return hub.Wrap(hub.Unavailable, err, "the host could not be reached")
		}
		return err
	}
	return nil
}

// RemoveHost removes the named host, refused (Conflict) while any
// workspace lives on it, and closes its connection. Nothing on the host
// is touched.
func (h *Hub) RemoveHost(ctx context.Context, name string) error {
	// Registrations are serialized by onboardMu: none can land on the
	// host between the check and the removal.
	h.onboardMu.Lock()
	defer h.onboardMu.Unlock()
	backend := hub.HostBackend(name)
	err := h.commit(ctx, func(tx *writes) error {
		if _, err := tx.Host(name); err != nil {
			return err
		}
		ws, err := tx.Workspaces()
		if err != nil {
			return err
		}
		var on []string
		for _, w := range ws {
			if w.Backend == backend {
				on = append(on, w.ID)
			}
		}
		if len(on) > 0 {
			return hub.Errorf(hub.Conflict, "host %s holds workspaces (%s): forget them first", name, strings.Join(on, ", "))
		}
		return tx.DeleteHost(name)
	})
	if err != nil {
		return err
	}
	h.hosts.drop(name)
	h.log.LogAttrs(ctx, slog.LevelInfo, "host removed", slog.String("host", name))
	return nil
}
