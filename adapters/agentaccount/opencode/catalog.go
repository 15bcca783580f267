package opencode

import (
	"io"
)

// provider is what the status needs of one of OpenCode's providers.
type provider struct {
	ID   string
	Name string
	// Source is how OpenCode loaded it, for connected ones: env, config,
	// custom (a loader of its own or a plugin's) or api (the store).
	Source string
	// Env names the environment variables OpenCode reads its key from.
	Env []string
}

// catalog is an answer of `GET /provider` ({all, default, connected}) or
// of `GET /config/providers` ({providers, default}: the connected ones).
// Each provider also carries its models (megabytes in all) and, when its
// key came from the environment, the key itself: neither is read.
type catalog struct {
	Providers []provider // in the server's order, ids unique
	Connected []string   // GET /provider's list; nil for /config/providers
	byID      map[string]int
}

// find returns the provider id.
func (c *catalog) find(id string) (provider, bool) {
	i, ok := c.byID[id]
	if !ok {
		return provider{}, false
	}
	return c.Providers[i], true
}

// Bounds of a catalog.
const (
	maxProviders = 4096
	maxEnvNames  = 16
	// maxCatalog bounds the bytes of a catalog answer: OpenCode 1.18.33's
	// offline catalog is 6.4 MB, and it grows with models.dev.
	maxCatalog = 64 << 20
)

// parseCatalog reads a catalog answer from r, at most limit bytes
// (maxCatalog; else errTooLarge), holding one token at a time (never a
// model list). Providers with an invalid or repeated id are left out; so
// are those past maxProviders.
func parseCatalog(r io.Reader, limit int64) (catalog, error) {
	c := catalog{byID: map[string]int{}}
	w := newWalker(&limitReader{r: r, n: limit})
	err := w.eachMember(func(name string) error {
		switch name {
		case "all", "providers":
			return skipShape(w.eachElement(func() error {
				p, err := readProvider(w)
				if _, dup := c.byID[p.ID]; err != nil || dup || !validID(p.ID) || len(c.Providers) >= maxProviders {
					return skipShape(err)
				}
				c.byID[p.ID] = len(c.Providers)
				c.Providers = append(c.Providers, p)
				return nil
			}))
		case "connected":
			ids, err := w.readStrings(maxProviders)
			for _, id := range ids {
				if validID(id) {
					c.Connected = append(c.Connected, id)
				}
			}
			return err
		default:
			return w.skip()
		}
	})
	if err != nil {
		return catalog{}, err
	}
	return c, w.end()
}

// readProvider reads one provider object, skipping every member but its
// id, name, source and env.
func readProvider(w *walker) (provider, error) {
	var p provider
	err := w.eachMember(func(name string) error {
		var err error
		switch name {
		case "id":
			p.ID, _, err = w.readString()
		case "name":
			var s string
			s, _, err = w.readString()
			p.Name = clean(s, maxLabel, false)
		case "source":
			p.Source, _, err = w.readString()
		case "env":
			var names []string
			names, err = w.readStrings(maxEnvNames)
			for _, n := range names {
				if validEnvName(n) {
					p.Env = append(p.Env, n)
				}
			}
		default:
			err = w.skip()
		}
		return err
	})
	return p, err
}
