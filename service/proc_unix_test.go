//go:build unix

package service

import (
	"os/exec"
	"syscall"
)

// ownChild puts cmd in a process group of its own, so that killGroup stops
// it with whatever it started.
func ownChild(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
}

// killGroup kills cmd's process group with SIGKILL.
func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
