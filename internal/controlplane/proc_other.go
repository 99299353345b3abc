//go:build !linux

package controlplane

import "syscall"

func childProcAttr() *syscall.SysProcAttr { return nil }
