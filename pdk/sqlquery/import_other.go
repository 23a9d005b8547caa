//go:build !wasip1

package sqlquery

func query(uint64) uint64 { panic("sqlquery: only available inside a wasip1 plugin") }
