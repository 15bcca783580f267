package service

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
)

// settingDefaultParent is the setting holding the default workspace parent.
const settingDefaultParent = "workspace-defaults.parent"

// WorkspaceDefaults returns the current preference.
func (h *Hub) WorkspaceDefaults(ctx context.Context) (hub.WorkspaceDefaults, error) {
	_, configured, err := h.st.registry(ctx)
	if err != nil {
		return hub.WorkspaceDefaults{}, err
	}
	return h.resolveDefaults(configured)
}

func (h *Hub) resolveDefaults(configured string) (hub.WorkspaceDefaults, error) {
	d := hub.WorkspaceDefaults{Configured: configured}
	if configured != "" && h.isDir(configured) {
		d.ConfiguredAvailable = true
		d.Effective = configured
		return d, nil
	}
	home, err := h.fs.Home()
	if err != nil {
		return hub.WorkspaceDefaults{}, hub.Wrap(hub.Unavailable, err, "the Hub user's home directory is unknown")
	}
	d.Effective = home
	return d, nil
}

// SetDefaultParent sets the default workspace parent to dir, which must be
// an existing directory that is not a symbolic link; its canonical path is
// stored. A nil dir clears the preference.
func (h *Hub) SetDefaultParent(ctx context.Context, dir *string) (hub.WorkspaceDefaults, error) {
	var canon string
	if dir != nil {
		p, err := absPath(*dir, "default workspace parent must be an absolute path")
		if err != nil {
			return hub.WorkspaceDefaults{}, err
		}
		fi, err := h.fs.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return hub.WorkspaceDefaults{}, hub.Errorf(hub.Invalid, "default workspace parent was not found")
		case err != nil:
			return hub.WorkspaceDefaults{}, hub.Wrap(hub.Invalid, err, "default workspace parent cannot be resolved")
		case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
			return hub.WorkspaceDefaults{}, hub.Errorf(hub.Invalid, "default workspace parent must be a direct non-symbolic-link directory")
		}
		if canon, err = h.fs.EvalSymlinks(p); err != nil {
			return hub.WorkspaceDefaults{}, hub.Wrap(hub.Invalid, err, "default workspace parent cannot be resolved")
		}
	}
	err := h.commit(ctx, func(tx *writes) error {
		if canon == "" {
			return tx.DeleteSetting(settingDefaultParent)
		}
		return tx.PutSetting(settingDefaultParent, canon)
	})
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "could not persist Hub preferences", slog.Any("err", err))
		return hub.WorkspaceDefaults{}, hub.Wrap(hub.Internal, err, "failed to persist Hub preferences")
	}
	return h.resolveDefaults(canon)
}
