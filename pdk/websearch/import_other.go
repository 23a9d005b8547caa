//go:build !wasip1

package websearch

func search(uint64) uint64 { panic("websearch: only available inside a wasip1 plugin") }
