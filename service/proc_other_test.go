//go:build unix && !linux

package service

import "syscall"

func setParentDeathSignal(*syscall.SysProcAttr) {}
