//go:build !unix

package main

import "time"

// CPU time is not measured on this platform.
func processCPU() time.Duration { return 0 }

// raiseNoFile is not done on this platform; it reports no limit.
func raiseNoFile(want uint64) (soft, hard uint64, err error) { return want, want, nil }
