//go:build !wasip1

package progress

func report(uint64) uint64 { panic("progress: only available inside a wasip1 plugin") }
