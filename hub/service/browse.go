package service

import (
	"context"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/wharfhub/wharf/hub"
)

// Browse lists the child directories of dir on the machine backend names
// ("" is the Hub's); an empty dir means the effective default parent on
// the Hub's machine (the Hub user's home unless configured) and the login
// user's home on a host. Hidden entries (a leading dot), files and
// symbolic links are not listed.
func (h *Hub) Browse(ctx context.Context, backend, dir string) (hub.BrowseResult, error) {
	pl, err := h.placeOf(ctx, backend)
	if err != nil {
		return hub.BrowseResult{}, err
	}
	switch {
	case dir != "":
	case pl.local():
		d, err := h.WorkspaceDefaults(ctx)
		if err != nil {
			return hub.BrowseResult{}, err
		}
		dir = d.Effective
	default:
		if dir, err = pl.fs.Home(); err != nil {
			return hub.BrowseResult{}, fsError(err, "the host's home folder could not be read")
		}
	}
	p, err := absPath(dir, "path must be absolute")
	if err != nil {
		return hub.BrowseResult{}, err
	}
	entries, err := pl.fs.ReadDir(p)
	if err != nil {
		return hub.BrowseResult{}, hub.Wrap(hub.NotFound, err, "cannot read directory: "+p)
	}
	// Registrations are canonical, so match them against the canonical
	// form of the listed directory.
	canon, err := pl.fs.EvalSymlinks(p)
	if err != nil {
		return hub.BrowseResult{}, hub.Wrap(hub.NotFound, err, "cannot read directory: "+p)
	}
	ws, err := h.registry(ctx)
	if err != nil {
		return hub.BrowseResult{}, err
	}
	byPath := make(map[string]hub.Workspace, len(ws))
	for _, w := range ws {
		if w.Backend == pl.name {
			byPath[w.Path] = w
		}
	}
	res := hub.BrowseResult{Path: p, Dirs: []hub.BrowseEntry{}}
	if p != "/" {
		res.Parent = path.Dir(p)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		be := hub.BrowseEntry{Name: e.Name()}
		if w, ok := byPath[path.Join(canon, e.Name())]; ok {
			be.RegisteredID, be.DisplayName, be.Running = w.ID, w.DisplayName, h.Running(w.ID)
		}
		res.Dirs = append(res.Dirs, be)
	}
	markRepositories(pl, canon, res.Dirs)
	// Case-insensitive order first, byte order to break ties, so the
	// listing is stable across platforms and locales.
	slices.SortFunc(res.Dirs, func(a, b hub.BrowseEntry) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return res, nil
}

// browseLookups bounds the .git lookups a listing runs at once: on a host
// each is a round trip, so a folder of many children would otherwise
// take one round trip per child.
const browseLookups = 8

// markRepositories sets Git on each entry of dirs (children of canon on
// pl) that holds a .git, looking them up browseLookups at a time.
func markRepositories(pl place, canon string, dirs []hub.BrowseEntry) {
	sem := make(chan struct{}, browseLookups)
	var wg sync.WaitGroup
	for i := range dirs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := pl.fs.Lstat(path.Join(canon, dirs[i].Name, ".git"))
			dirs[i].Git = err == nil
		})
	}
	wg.Wait()
}
