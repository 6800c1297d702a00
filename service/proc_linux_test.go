package service

import "syscall"

// setParentDeathSignal has Linux kill the child if the test binary dies
// without running its cleanups (a panic, go test's own timeout, SIGKILL).
// Linux sends it when the thread that started the child exits; the Go
// runtime ends threads only in rare cases, and a child killed that way
// fails its test loudly, it does not leak.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
