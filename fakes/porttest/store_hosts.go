package porttest

import (
	"testing"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/hub"
)

// storeHosts runs the subtests of the hosts and of paths unique per
// machine.
func storeHosts(t *testing.T, k storeKit) {
	t.Run("Hosts", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		gpu := hub.Host{Name: "gpu", Destination: "ann@gpu.example.net", AddedAt: k.t0.Add(7)}
		build := hub.Host{Name: "build-1", Destination: "build", AddedAt: k.t0.Add(8)}
		k.update(t, s, func(tx hub.Tx) error {
			hs, err := tx.Hosts()
			is.NoErr(err)                  // list no hosts
			is.Equal(len(hs), 0)           // none at first
			is.NoErr(tx.CreateHost(gpu))   // add gpu
			is.NoErr(tx.CreateHost(build)) // add build-1
			again := gpu
			again.Destination = "other"
			is.Equal(hub.KindOf(tx.CreateHost(again)), hub.Conflict) // a name taken
			for _, bad := range []hub.Host{
				{Name: "", Destination: "x"}, {Name: "GPU", Destination: "x"}, {Name: "-x", Destination: "x"},
				{Name: "gpu2", Destination: "-oProxyCommand=evil"}, {Name: "gpu3", Destination: "a b"}, {Name: "gpu4"},
			} {
				is.Equal(hub.KindOf(tx.CreateHost(bad)), hub.Invalid) // refused before it is stored
			}
			return nil
		})
		is.NoErr(s.View(k.ctx, func(tx hub.Tx) error { // the view succeeds
			hs, err := tx.Hosts()
			is.NoErr(err)                                                           // list
			is.True(len(hs) == 2 && hs[0].Name == "build-1" && hs[1].Name == "gpu") // sorted by name, the refused ones absent
			got, err := tx.Host("gpu")
			is.NoErr(err)                                                                          // find by name
			is.True(got.Destination == gpu.Destination && got.AddedAt.Equal(gpu.AddedAt.Round(0))) // every field round-trips
			_, err = tx.Host("nope")
			is.Equal(hub.KindOf(err), hub.NotFound) // an unknown name
			return nil
		}))
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.DeleteHost("gpu"))                           // remove gpu
			is.Equal(hub.KindOf(tx.DeleteHost("gpu")), hub.NotFound) // twice
			is.NoErr(tx.CreateHost(gpu))                             // its name is free again
			return nil
		})
	})

	t.Run("PathsAreUniquePerMachine", func(t *testing.T) {
		is := is.New(t)
		s := k.open(t)
		here := k.workspace("here", 1)
		there := k.workspace("there", 2)
		there.Path, there.Backend = here.Path, hub.HostBackend("gpu")
		k.update(t, s, func(tx hub.Tx) error {
			is.NoErr(tx.CreateWorkspace(here))  // the path on the Hub's machine
			is.NoErr(tx.CreateWorkspace(there)) // the same path on another machine
			twin := k.workspace("twin", 3)
			twin.Path, twin.Backend = here.Path, hub.HostBackend("gpu")
			is.Equal(hub.KindOf(tx.CreateWorkspace(twin)), hub.Conflict) // but not twice on one machine
			moved := k.workspace("moved", 4)
			is.NoErr(tx.CreateWorkspace(moved)) // another local one
			moved.Path = here.Path
			is.Equal(hub.KindOf(tx.UpdateWorkspace(moved)), hub.Conflict) // moving onto a path its machine holds
			there.Path = "/elsewhere"
			is.NoErr(tx.UpdateWorkspace(there)) // a remote one moves on its machine
			back := there
			back.Path = here.Path
			is.NoErr(tx.UpdateWorkspace(back)) // and back: the local holder is on another machine
			return nil
		})
	})
}
