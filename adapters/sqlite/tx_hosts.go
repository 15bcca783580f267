package sqlite

import "github.com/wharfhub/wharf/hub"

// This file holds the hosts (migration 0008).

func scanHost(sc scanner) (hub.Host, error) {
	var h hub.Host
	var added int64
	err := sc.Scan(&h.Name, &h.Destination, &added)
	h.AddedAt = fromNanos(added)
	return h, err
}

func (t *tx) Hosts() ([]hub.Host, error) {
	return queryAll(t, scanHost, `SELECT name, destination, added_at FROM hosts ORDER BY name`)
}

func (t *tx) Host(name string) (hub.Host, error) {
	hs, err := queryAll(t, scanHost, `SELECT name, destination, added_at FROM hosts WHERE name = ?`, name)
	if err != nil {
		return hub.Host{}, err
	}
	if len(hs) == 0 {
		return hub.Host{}, hub.Errorf(hub.NotFound, "no host named %q", name)
	}
	return hs[0], nil
}

func (t *tx) CreateHost(h hub.Host) error {
	if err := hub.CheckHostName(h.Name); err != nil {
		return err
	}
	if err := hub.CheckDestination(h.Destination); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO hosts (name, destination, added_at) VALUES (?, ?, ?)`, h.Name, h.Destination, nanos(h.AddedAt))
	if isConstraint(err, "UNIQUE") {
		return hub.Errorf(hub.Conflict, "a host named %q already exists", h.Name)
	}
	if err != nil {
		return internal(err)
	}
	return nil
}

func (t *tx) DeleteHost(name string) error {
	return t.expectOne(hub.Errorf(hub.NotFound, "no host named %q", name), `DELETE FROM hosts WHERE name = ?`, name)
}
