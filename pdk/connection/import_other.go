//go:build !wasip1

package connection

func request(uint64) uint64 { panic(only) }
func info(uint64) uint64    { panic(only) }

const only = "connection: only available inside a wasip1 plugin"
