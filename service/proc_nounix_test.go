//go:build !unix

package service

import "os/exec"

// ownChild has nothing to set where there are no process groups.
func ownChild(*exec.Cmd) {}

// killGroup kills the child alone.
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
