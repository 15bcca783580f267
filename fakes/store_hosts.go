package fakes

import (
	"maps"
	"slices"
	"strings"

	"github.com/wharfhub/wharf/hub"
)

// This file holds the fake store's hosts.

func (t *tx) Hosts() ([]hub.Host, error) {
	return slices.SortedFunc(maps.Values(t.st.hosts), func(a, b hub.Host) int { return strings.Compare(a.Name, b.Name) }), nil
}

func (t *tx) Host(name string) (hub.Host, error) {
	h, ok := t.st.hosts[name]
	if !ok {
		return hub.Host{}, hub.Errorf(hub.NotFound, "no host named %q", name)
	}
	return h, nil
}

func (t *tx) CreateHost(h hub.Host) error {
	if err := t.write(); err != nil {
		return err
	}
	if err := hub.CheckHostName(h.Name); err != nil {
		return err
	}
	if err := hub.CheckDestination(h.Destination); err != nil {
		return err
	}
	if _, ok := t.st.hosts[h.Name]; ok {
		return hub.Errorf(hub.Conflict, "a host named %q already exists", h.Name)
	}
	t.st.hosts[h.Name] = h
	return nil
}

func (t *tx) DeleteHost(name string) error {
	if err := t.write(); err != nil {
		return err
	}
	if _, ok := t.st.hosts[name]; !ok {
		return hub.Errorf(hub.NotFound, "no host named %q", name)
	}
	delete(t.st.hosts, name)
	return nil
}
