//go:build !wasip1

package files

func read(uint64) uint64       { panic("files: only available inside a wasip1 plugin") }
func write(uint64) uint64      { panic("files: only available inside a wasip1 plugin") }
func list(uint64) uint64       { panic("files: only available inside a wasip1 plugin") }
func info(uint64) uint64       { panic("files: only available inside a wasip1 plugin") }
func setContent(uint64) uint64 { panic("files: only available inside a wasip1 plugin") }
func move(uint64) uint64       { panic("files: only available inside a wasip1 plugin") }
func tag(uint64) uint64        { panic("files: only available inside a wasip1 plugin") }
func propose(uint64) uint64    { panic("files: only available inside a wasip1 plugin") }
