package controlplane

import "syscall"

// ChildProcAttr makes the kernel kill a child when tollgate dies, even by
// SIGKILL, so no controller manager outlives the stack that started it.
func ChildProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
