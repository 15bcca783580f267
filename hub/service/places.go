package service

import (
	"context"
	"log/slog"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// A place is the machine a workspace lives on, as the core uses it: the
// backend that runs its sessions, and the file system and git that its
// folder and repository operations run on. The Hub's own machine is
// h.here; each configured host is one HostPlace, connected on first use
// and kept until the host is removed or its destination changes.
//
// Every path the core handles belongs to one place. Operations that name
// a folder (register, create, browse) name its place by backend; those
// on a workspace take its place from its record. Reservations key a path
// by its place, so equal paths on two machines never conflict.
type place struct {
	name    string // the backend name: hub.LocalBackend or hub.HostBackend(host)
	backend hub.Backend
	fs      hub.FS
	git     hub.GitRunner
}

// local reports whether p is the Hub's own machine.
func (p place) local() bool { return p.name == hub.LocalBackend }

// journalName is p's name as a journal records it: "" for the Hub's
// machine, so journals written before hosts existed read the same.
func (p place) journalName() string {
	if p.local() {
		return ""
	}
	return p.name
}

// key is path p's reservation key: the path itself on the Hub's machine,
// and behind its backend's name elsewhere, so keys of one place are still
// ordered as their paths are (atOrBelow).
func (p place) key(path string) string { return placeKey(p.name, path) }

// placeKey is place.key of the place named backend ("" for the Hub's
// machine, as journals name it).
func placeKey(backend, path string) string {
	if backend == "" || backend == hub.LocalBackend {
		return path
	}
	return "\x00" + backend + "\x00" + path
}

// canonical resolves the links in an absolute path git reported on p,
// so it compares with the registry's canonical paths; as given when it
// cannot.
func (p place) canonical(path string) string {
	if c, err := p.fs.EvalSymlinks(path); err == nil {
		return c
	}
	return path
}

// hostPlaces are the connected hosts, by name.
type hostPlaces struct {
	connector hub.HostConnector // nil: this Hub reaches no other machine

	mu   sync.Mutex
	open map[string]connectedHost
}

type connectedHost struct {
	destination string
	hp          hub.HostPlace
}

// errNoHosts refuses a host where the Hub was built without a connector
// (an embedding that runs workspaces on its own machine only).
var errNoHosts = hub.Errorf(hub.Unavailable, "this Hub cannot reach other machines")

// placeOf returns the place of backend: "" and hub.LocalBackend are the
// Hub's machine; hub.HostBackend(name) is that configured host. An
// unknown backend is Invalid: backends arrive in requests.
func (h *Hub) placeOf(ctx context.Context, backend string) (place, error) {
	if backend == "" || backend == hub.LocalBackend {
		return h.here, nil
	}
	name, ok := hub.HostOfBackend(backend)
	if !ok {
		return place{}, hub.Errorf(hub.Invalid, "unknown backend %q: use local or ssh:<host name>", backend)
	}
	var host hub.Host
	err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		host, err = tx.Host(name)
		return err
	})
	if hub.KindOf(err) == hub.NotFound {
		h.hosts.drop(name) // removed by another process (`wharf host remove`)
		return place{}, hub.Errorf(hub.Invalid, "unknown backend %q: no host is named %q", backend, name)
	}
	if err != nil {
		return place{}, err
	}
	hp, err := h.hosts.connect(host)
	if err != nil {
		return place{}, err
	}
	return place{name: backend, backend: hp, fs: hp.FS(), git: hp.Git()}, nil
}

// connect returns the connected place of host, connecting it (without
// I/O) when it is new or its destination changed.
func (hs *hostPlaces) connect(host hub.Host) (hub.HostPlace, error) {
	if hs.connector == nil {
		return nil, errNoHosts
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if c, ok := hs.open[host.Name]; ok {
		if c.destination == host.Destination {
			return c.hp, nil
		}
		c.hp.Close()
		delete(hs.open, host.Name)
	}
	hp, err := hs.connector.Connect(host)
	if err != nil {
		return nil, hub.Wrap(hub.Internal, err, "the host could not be prepared")
	}
	if hs.open == nil {
		hs.open = map[string]connectedHost{}
	}
	hs.open[host.Name] = connectedHost{destination: host.Destination, hp: hp}
	return hp, nil
}

// drop closes and forgets the connected place of the named host.
func (hs *hostPlaces) drop(name string) {
	hs.mu.Lock()
	c, ok := hs.open[name]
	delete(hs.open, name)
	hs.mu.Unlock()
	if ok {
		c.hp.Close()
	}
}

// closeAll closes every connected host, at the Hub's close.
func (hs *hostPlaces) closeAll(log *slog.Logger) {
	hs.mu.Lock()
	open := hs.open
	hs.open = nil
	hs.mu.Unlock()
	for name, c := range open {
		if err := c.hp.Close(); err != nil {
			log.Warn("a host's connection did not close cleanly", "host", name, "err", err)
		}
	}
}
