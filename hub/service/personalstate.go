package service

import (
	"context"

	"github.com/wharfhub/wharf/hub"
)

// PersonalState returns the caller's state in a workspace, running or not.
func (h *Hub) PersonalState(ctx context.Context, caller hub.DeviceSession, id string) (hub.PersonalState, error) {
	var st hub.PersonalState
	err := h.store.View(ctx, func(tx hub.Tx) error {
		if _, err := tx.Workspace(id); err != nil {
			return err
		}
		var err error
		st, err = tx.PersonalState(caller.User, id)
		return err
	})
	if hub.KindOf(err) == hub.NotFound {
		return hub.PersonalState{}, hub.Errorf(hub.NotFound, "unknown workspace: %s", id)
	}
	return st, err
}

// PatchPersonalState applies p to the caller's state in a workspace and
// returns the whole state. The read and the write are one transaction, so
// concurrent patches of different fields both survive.
func (h *Hub) PatchPersonalState(ctx context.Context, caller hub.DeviceSession, id string, p hub.PersonalStatePatch) (hub.PersonalState, error) {
	if err := p.Validate(); err != nil {
		return hub.PersonalState{}, err
	}
	var st hub.PersonalState
	err := h.commit(ctx, func(tx *writes) error {
		if _, err := tx.Workspace(id); err != nil {
			return err
		}
		var err error
		if st, err = tx.PersonalState(caller.User, id); err != nil {
			return err
		}
		p.ApplyTo(&st)
		return tx.PutPersonalState(caller.User, id, st)
	})
	switch {
	case hub.KindOf(err) == hub.NotFound:
		return hub.PersonalState{}, hub.Errorf(hub.NotFound, "unknown workspace: %s", id)
	case err != nil:
		return hub.PersonalState{}, hub.Wrap(hub.Internal, err, "failed to persist personal state")
	}
	h.idle.touch(id) // a person moved about the workspace
	return st, nil
}

// AcknowledgeActivity records that the caller has the workspace's activity
// in view: it clears the workspace's `finished` for that user on every
// device. Acknowledging when nothing unseen has finished changes nothing.
func (h *Hub) AcknowledgeActivity(ctx context.Context, caller hub.DeviceSession, id string) error {
	if _, err := h.workspace(ctx, id); err != nil {
		return err
	}
	h.live.Acknowledge(ctx, caller.User, id)
	h.idle.touch(id) // a person has the workspace's chat in view
	return nil
}
