package osfs_test

import (
	"os"
	"testing"

	"github.com/wharfhub/wharf/adapters/osfs"
	"github.com/wharfhub/wharf/fakes/porttest"
)

func TestFS(t *testing.T) {
	porttest.FS(t, func(t *testing.T) porttest.FSHarness {
		return porttest.FSHarness{
			FS:        osfs.FS{},
			Root:      t.TempDir(),
			WriteFile: func(p string) error { return os.WriteFile(p, nil, 0o600) },
			Symlink:   os.Symlink,
		}
	})
}
