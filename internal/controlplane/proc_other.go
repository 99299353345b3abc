//go:build !linux

package controlplane

import "syscall"

// ChildProcAttr is nil: only Linux kills children with their parent.
func ChildProcAttr() *syscall.SysProcAttr { return nil }
