package controlplane

import "syscall"

// childProcAttr makes the kernel kill the child when tollgate dies, even by
// SIGKILL, so no controller manager outlives the stack that started it.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
