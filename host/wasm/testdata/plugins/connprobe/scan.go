package main

import (
	"encoding/hex"
	"unsafe"

	"github.com/agenthost/agenthost/pdk"
)

// This file is shared: msprobe and ftpprobe link to it.

type scanArgs struct {
	// Masked is the needle, each byte XOR 0x5a, hex-encoded.
	Masked string `json:"masked"`
}

// scan counts occurrences of the needle in the guest's linear memory, from
// the first page up to the top of a fresh allocation (the heap grows
// upward, so everything below it is mapped).
func scan(a scanArgs) (int, error) {
	m, err := hex.DecodeString(a.Masked)
	if err != nil || len(m) == 0 {
		return 0, pdk.Errorf("invalid", "masked needle")
	}
	needle := make([]byte, len(m))
	for i := range m {
		needle[i] = m[i] ^ 0x5a
	}
	top := make([]byte, 1<<16)
	end := uintptr(unsafe.Pointer(&top[len(top)-1]))
	self := uintptr(unsafe.Pointer(&needle[0]))
	mem := unsafe.Slice((*byte)(unsafe.Pointer(uintptr(1024))), end-1024)
	n := 0
	for i := 0; i+len(needle) <= len(mem); i++ {
		if mem[i] == needle[0] && uintptr(unsafe.Pointer(&mem[i])) != self && string(mem[i:i+len(needle)]) == string(needle) {
			n++
		}
	}
	for i := range needle {
		needle[i] = 0
	}
	return n, nil
}
