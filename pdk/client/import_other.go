//go:build !wasip1

package client

func sample(uint64) uint64     { panic("client: only available inside a wasip1 plugin") }
func elicit(uint64) uint64     { panic("client: only available inside a wasip1 plugin") }
func logMessage(uint64) uint64 { panic("client: only available inside a wasip1 plugin") }
func poll(uint64) uint64       { panic("client: only available inside a wasip1 plugin") }
func roots(uint64) uint64      { panic("client: only available inside a wasip1 plugin") }
