package service

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/wharfhub/wharf/hub"
)

const recoveryRequiredText = "workspace onboarding committed but its journal could not be cleared; restart the Hub to reconcile"

// existingFolder validates the folder of a registration on pl and returns
// its canonical path.
func (pl place) existingFolder(p string) (string, error) {
	p, err := absPath(p, "an absolute folder path is required")
	if err != nil {
		return "", err
	}
	return pl.directDir(p, "folder path")
}

// needsInit inspects dir on pl: whether it is in no repository. When git
// cannot tell, registration goes ahead without offering to initialize.
func (h *Hub) needsInit(ctx context.Context, pl place, dir string) bool {
	repo, err := pl.git.Inspect(ctx, dir)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "git could not inspect a folder", slog.String("path", dir), slog.Any("err", err))
		return false
	}
	return repo.TopLevel == ""
}

// beginOnboarding serializes a registration of dir on pl with every
// other one (so minted ids cannot race), refuses it while a journal is
// stranded, and reserves dir. end undoes both.
func (h *Hub) beginOnboarding(pl place, dir string) (end func(), err error) {
	h.onboardMu.Lock()
	if err := h.fence(fenceRegister); err != nil {
		h.onboardMu.Unlock()
		return nil, err
	}
	release, err := h.reserved.reserve(pl.key(dir))
	if err != nil {
		h.onboardMu.Unlock()
		return nil, err
	}
	return func() {
		release()
		h.onboardMu.Unlock()
	}, nil
}

func notRepository(dir string) error {
	return &hub.Error{Kind: hub.Conflict, Message: dir + " is not a git repository", Details: &hub.Details{NeedsInit: true}}
}

// Register is the legacy registration (hubCreateWorkspace). Registering a
// folder that is already registered returns that workspace, started when
// asked. A requested start that fails is an error; the registration stays.
func (h *Hub) Register(ctx context.Context, req hub.RegisterRequest) (hub.WorkspaceAction, error) {
	w, recovery, err := h.register(ctx, req)
	if err != nil {
		return hub.WorkspaceAction{}, err
	}
	if recovery != "" {
		return hub.WorkspaceAction{ID: w.ID, RecoveryRequired: recovery}, nil
	}
	if !req.Start {
		return hub.WorkspaceAction{ID: w.ID, Running: h.Running(w.ID)}, nil
	}
	return h.StartWorkspace(ctx, w.ID)
}

// register finds or commits Register's registration; the start runs after
// the onboarding lock and the reservation are released.
func (h *Hub) register(ctx context.Context, req hub.RegisterRequest) (hub.Workspace, string, error) {
	pl, err := h.placeOf(ctx, req.Backend)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	dir, err := pl.existingFolder(req.Path)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	end, err := h.beginOnboarding(pl, dir)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	defer end()
	if w, ok, err := h.registeredAt(ctx, pl.name, dir); err != nil || ok {
		return w, "", err
	}
	init := h.needsInit(ctx, pl, dir)
	if init && !req.Init {
		return hub.Workspace{}, "", notRepository(dir)
	}
	return h.onboard(ctx, pl, "register", dir, hub.DefaultDisplayName(dir), init, false, selections{})
}

// Configure registers an existing folder with a display name and
// credential selections, committed together before any optional start.
func (h *Hub) Configure(ctx context.Context, req hub.ConfigureRequest) (hub.OnboardingResult, error) {
	w, recovery, err := h.configure(ctx, req)
	if err != nil {
		return hub.OnboardingResult{}, err
	}
	return h.finishOnboarding(ctx, w, recovery, req.Start), nil
}

// configure commits Configure's registration; the start, which may take a
// while, runs after the onboarding lock and the reservation are released.
func (h *Hub) configure(ctx context.Context, req hub.ConfigureRequest) (hub.Workspace, string, error) {
	name, err := hub.NormalizeDisplayName(req.DisplayName)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	pl, err := h.placeOf(ctx, req.Backend)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	dir, err := pl.existingFolder(req.Path)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	end, err := h.beginOnboarding(pl, dir)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	defer end()
	if w, ok, err := h.registeredAt(ctx, pl.name, dir); err != nil {
		return hub.Workspace{}, "", err
	} else if ok {
		return hub.Workspace{}, "", hub.Errorf(hub.Conflict, "folder is already registered as workspace %s", w.ID)
	}
	if err := h.checkSelections(ctx, req.Authentication, req.Signing); err != nil {
		return hub.Workspace{}, "", err
	}
	init := h.needsInit(ctx, pl, dir)
	if init && !req.Init {
		return hub.Workspace{}, "", notRepository(dir)
	}
	return h.onboard(ctx, pl, "configure-existing", dir, name, init, false, selections{req.Authentication, req.Signing})
}

// CreateConfigured creates one new visible folder under parent, never
// replacing anything, initializes a repository in it and registers it.
// Once the repository exists a failure keeps it and reports its path, so
// the caller can retry through Configure.
func (h *Hub) CreateConfigured(ctx context.Context, req hub.CreateConfiguredRequest) (hub.OnboardingResult, error) {
	w, recovery, err := h.createConfigured(ctx, req)
	if err != nil {
		return hub.OnboardingResult{}, err
	}
	return h.finishOnboarding(ctx, w, recovery, req.Start), nil
}

// createConfigured commits CreateConfigured's folder, repository and
// registration; the start runs after the locks are released.
func (h *Hub) createConfigured(ctx context.Context, req hub.CreateConfiguredRequest) (hub.Workspace, string, error) {
	parent, err := absPath(req.Parent, "parent must be an absolute path")
	if err != nil {
		return hub.Workspace{}, "", err
	}
	if err := hub.CheckFolderName("folderName", req.FolderName); err != nil {
		return hub.Workspace{}, "", err
	}
	name, err := hub.NormalizeDisplayName(req.DisplayName)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	pl, err := h.placeOf(ctx, req.Backend)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	if parent, err = pl.directDir(parent, "parent"); err != nil {
		return hub.Workspace{}, "", err
	}
	dir, err := child(parent, req.FolderName)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	end, err := h.beginOnboarding(pl, dir)
	if err != nil {
		return hub.Workspace{}, "", err
	}
	defer end()
	if err := h.checkSelections(ctx, req.Authentication, req.Signing); err != nil {
		return hub.Workspace{}, "", err
	}
	if pl.exists(dir) {
		return hub.Workspace{}, "", hub.Errorf(hub.Conflict, "destination already exists")
	}
	if err := h.unclaimed(ctx, pl.name, dir); err != nil {
		return hub.Workspace{}, "", err
	}
	return h.onboard(ctx, pl, "create-new", dir, name, true, true, selections{req.Authentication, req.Signing})
}

// registeredAt returns the workspace registered exactly at dir on
// backend, if any.
func (h *Hub) registeredAt(ctx context.Context, backend, dir string) (w hub.Workspace, ok bool, err error) {
	err = h.store.View(ctx, func(tx hub.Tx) error {
		w, ok, err = workspaceAt(tx, backend, dir)
		return err
	})
	return w, ok, err
}

// unclaimed refuses a destination on backend that a registration holds,
// at it or below it (a registered folder that has since vanished still
// holds its path).
func (h *Hub) unclaimed(ctx context.Context, backend, dest string) error {
	var claimed bool
	err := h.store.View(ctx, func(tx hub.Tx) error {
		ws, err := workspacesAtOrBelow(tx, backend, dest)
		claimed = len(ws) > 0
		return err
	})
	if err != nil {
		return err
	}
	if claimed {
		return hub.Errorf(hub.Conflict, "destination is claimed by a registered workspace")
	}
	return nil
}

// selections are the credentials a registration assigns its workspace.
type selections struct {
	authentication []hub.AuthenticationSelection
	signing        string
}

// onboard registers dir on pl under a journal. With create it first makes the
// folder; with init it runs `git init` there. The registration commits in
// one transaction with the assignments of sel, decided again there (a
// credential disabled meanwhile refuses the whole registration); the journal is then cleared in its own, and when that
// fails the registration stands and recovery is reported instead of an
// error. The caller holds onboardMu and dir's reservation.
func (h *Hub) onboard(ctx context.Context, pl place, op, dir, name string, init, create bool, sel selections) (hub.Workspace, string, error) {
	var id string
	if err := h.store.View(ctx, func(tx hub.Tx) error {
		var err error
		id, err = mintID(tx, dir)
		return err
	}); err != nil {
		return hub.Workspace{}, "", err
	}
	jid, err := h.openJournal(ctx, hub.JournalOnboarding, onboardingIntent{
		Version: journalVersion, Operation: op, WorkspaceID: id, Path: dir, Backend: pl.name, CreatedFolder: create})
	if err != nil {
		return hub.Workspace{}, "", err
	}
	// From here on the disk may change: the journal must be closed on
	// every path, and an initialized repository is never deleted.
	abandon := func(err error) (hub.Workspace, string, error) {
		h.closeJournal(ctx, jid, hub.JournalOnboarding)
		return hub.Workspace{}, "", err
	}
	if create {
		if err := pl.fs.Mkdir(dir); err != nil {
			return abandon(fsError(err, "folder creation failed"))
		}
	}
	if init {
		if err := pl.git.Init(ctx, dir); err != nil {
			h.log.LogAttrs(ctx, slog.LevelWarn, "git init failed", slog.String("path", dir), slog.Any("err", err))
			e := hub.Wrap(hub.Internal, err, "git init failed")
			if create {
				if rerr := pl.fs.RemoveEmpty(dir); rerr != nil {
					e.Details = &hub.Details{RetainedPath: dir}
				}
			}
			return abandon(e)
		}
	}
	w := hub.Workspace{ID: id, Path: dir, DisplayName: name, Backend: pl.name, RegisteredAt: h.clock.Now()}
	var refused error
	err = h.commit(ctx, func(tx *writes) error {
		if host, ok := hub.HostOfBackend(pl.name); ok {
			// Its host may have been removed since placeOf looked.
			if _, err := tx.Host(host); hub.KindOf(err) == hub.NotFound {
				refused = hub.Errorf(hub.Conflict, "host %s was removed meanwhile", host)
				return refused
			} else if err != nil {
				return err
			}
		}
		if err := tx.CreateWorkspace(w); err != nil {
			return err
		}
		if len(sel.authentication) == 0 && sel.signing == "" {
			return nil
		}
		cat, err := catalogIn(tx)
		if err != nil {
			return err
		}
		ch, err := cat.Onboard(w.ID, sel.authentication, sel.signing)
		if err != nil {
			refused = err
			return err
		}
		return writeChange(tx, ch)
	})
	if refused != nil {
		return abandon(refused)
	}
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelError, "workspace registration failed", slog.String("path", dir), slog.Any("err", err))
		e := hub.Wrap(hub.Internal, err, "workspace registration could not be persisted")
		if create {
			e.Message = fmt.Sprintf("workspace registration could not be persisted; the initialized repository was kept at %s: retry by configuring that existing folder", dir)
			e.Details = &hub.Details{RetainedPath: dir}
		}
		return abandon(e)
	}
	if err := h.closeJournal(ctx, jid, hub.JournalOnboarding); err != nil {
		return w, recoveryRequiredText, nil
	}
	return w, "", nil
}

// finishOnboarding runs the optional start of a committed registration and
// describes the outcome. A failed start keeps the stopped workspace.
func (h *Hub) finishOnboarding(ctx context.Context, w hub.Workspace, recovery string, start bool) hub.OnboardingResult {
	res := hub.OnboardingResult{RecoveryRequired: recovery}
	if start && recovery == "" {
		if unlock, err := h.wsLocks.Lock(ctx, w.ID); err != nil {
			res.StartError = "request cancelled"
		} else {
			if err := h.startLocked(ctx, w.ID, startNew); err != nil {
				res.StartError = hub.MessageOf(err)
			} else {
				res.Started = true
			}
			unlock()
		}
	}
	res.Workspace = h.withCredentials(ctx, hub.WorkspaceView{Workspace: w, Running: h.Running(w.ID), Authentication: []string{}, Signing: []string{}})
	return res
}
