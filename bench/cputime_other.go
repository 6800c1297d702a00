//go:build !unix

package bench

import "time"

// cpuTime returns 0: the CPU time is only read on Unix systems.
func cpuTime() time.Duration { return 0 }
