//go:build !wasip1

package input

func size() int64 { panic("input: only available inside a wasip1 plugin") }

func readAt(int64, []byte) int { panic("input: only available inside a wasip1 plugin") }
