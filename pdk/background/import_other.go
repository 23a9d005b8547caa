//go:build !wasip1

package background

func start(uint64) uint64  { panic("background: only available inside a wasip1 plugin") }
func status(uint64) uint64 { panic("background: only available inside a wasip1 plugin") }
