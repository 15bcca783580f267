package fakes_test

import (
	"testing"

	"github.com/wharfhub/wharf/fakes"
	"github.com/wharfhub/wharf/fakes/porttest"
)

func TestFS(t *testing.T) {
	porttest.FS(t, func(*testing.T) porttest.FSHarness {
		f := fakes.NewFS("/home/ann")
		f.MkdirAll("/work")
		return porttest.FSHarness{FS: f, Root: "/work", WriteFile: f.WriteFile, Symlink: f.Symlink}
	})
}
