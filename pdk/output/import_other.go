//go:build !wasip1

package output

func begin(uint64) uint64 { panic("output: only available inside a wasip1 plugin") }

func end(uint64) uint64 { panic("output: only available inside a wasip1 plugin") }

func fail(uint64) uint64 { panic("output: only available inside a wasip1 plugin") }

func write([]byte) int { panic("output: only available inside a wasip1 plugin") }
