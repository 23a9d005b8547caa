package procguard

import (
	"fmt"
	"syscall"
)

// prctl(2) options.
const (
	prGetDumpable = 3
	prSetDumpable = 4
)

// Undumpable marks the whole process not dumpable (prctl PR_SET_DUMPABLE
// 0): its /proc files belong to root, and reading its environment or memory
// needs CAP_SYS_PTRACE. It also means no core dumps. It is idempotent; the
// mark is the process's (its memory's), not one thread's, and survives
// until the process execs.
func Undumpable() error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", e)
	}
	return nil
}

// Dumpable says whether the process is dumpable (other processes of its
// user may read its /proc files).
func Dumpable() (bool, error) {
	r, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prGetDumpable, 0, 0)
	if e != 0 {
		return false, fmt.Errorf("prctl(PR_GET_DUMPABLE): %w", e)
	}
	return r != 0, nil
}
