//go:build !wasip1

package filetransfer

func list(uint64) uint64  { panic(only) }
func stat(uint64) uint64  { panic(only) }
func read(uint64) uint64  { panic(only) }
func write(uint64) uint64 { panic(only) }
func mkdir(uint64) uint64 { panic(only) }

const only = "filetransfer: only available inside a wasip1 plugin"
