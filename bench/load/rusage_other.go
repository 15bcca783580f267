//go:build !unix

package main

import "time"

// processCPU is not measured on this platform.
func processCPU() time.Duration { return 0 }

// machineBusy is not measured on this platform.
func machineBusy() (time.Duration, bool) { return 0, false }

// raiseNoFile is not done on this platform; it reports no limit.
func raiseNoFile(want uint64) (soft, hard uint64, err error) { return want, want, nil }
