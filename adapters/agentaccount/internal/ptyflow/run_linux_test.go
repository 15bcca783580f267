package ptyflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow"
	"github.com/wharfhub/wharf/adapters/agentaccount/internal/ptyflow/ptyflowtest"
)

func TestRunReturnsTheOutputAndTheExitStatus(t *testing.T) {
	is := is.New(t)
	cmd, _ := shell(t, `echo out; echo err >&2; exit 4`)
	out, code, err := ptyflow.Run(t.Context(), cmd, 1024)
	is.NoErr(err)                  // it ran
	is.Equal(string(out), "out\n") // standard output only
	is.Equal(code, 4)              // and its exit status
}

func TestRunRefusesOutputPastItsLimit(t *testing.T) {
	is := is.New(t)
	cmd, _ := shell(t, `head -c 2000 /dev/zero`)
	_, _, err := ptyflow.Run(t.Context(), cmd, 1000)
	is.True(errors.Is(err, ptyflow.ErrOutputTooLong)) // refused
}

func TestRunKillsACommandPastItsContext(t *testing.T) {
	is := is.New(t)
	cmd, mark := shell(t, `sleep 300 & sleep 300`)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := ptyflow.Run(ctx, cmd, 1024)
	is.True(errors.Is(err, context.DeadlineExceeded)) // the context's error
	is.True(time.Since(start) < 10*time.Second)       // promptly
	is.Equal(len(ptyflowtest.Left(mark)), 0)          // and nothing of its group is left
}
