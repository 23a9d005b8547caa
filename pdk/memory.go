//lint:file-ignore U1000 reached from //go:wasmexport functions, which the host calls and staticcheck cannot see

package pdk

import (
	"encoding/binary"
	"io"
	"os"
)

// Kernel memory helpers: the Extism ABI moves bytes 8 at a time.

// kernelWrite copies b into a new kernel block and returns its offset.
func kernelWrite(b []byte) uint64 {
	n := uint64(len(b))
	if n == 0 {
		return 0
	}
	off := extismAlloc(n)
	i := uint64(0)
	for ; i+8 <= n; i += 8 {
		extismStoreU64(off+i, binary.LittleEndian.Uint64(b[i:]))
	}
	for ; i < n; i++ {
		extismStoreU8(off+i, uint32(b[i]))
	}
	return off
}

// kernelRead copies the kernel block at offset into Go memory and frees it.
func kernelRead(off uint64) []byte {
	if off == 0 {
		return nil
	}
	n := extismLength(off)
	b := make([]byte, n)
	i := uint64(0)
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], extismLoadU64(off+i))
	}
	for ; i < n; i++ {
		b[i] = byte(extismLoadU8(off + i))
	}
	extismFree(off)
	return b
}

// fastIO reports whether the host serves input and output over WASI stdio
// (docs/plugin-abi.md). Only agenthost sets the config key; any other Extism
// host gets the standard ABI. Decided once per instance.
func (r *runtime) fastIO() bool {
	if !r.fastIOKnown {
		v, ok := ConfigGet("agenthost.stdio")
		r.fastIO1 = ok && v == "1"
		r.fastIOKnown = true
	}
	return r.fastIO1
}

// readInput returns the call's input.
func (r *runtime) readInput() []byte {
	n := extismInputLength()
	b := make([]byte, n)
	if n == 0 {
		return b
	}
	if r.fastIO() {
		if _, err := io.ReadFull(os.Stdin, b); err == nil {
			return b
		}
		// A host that set the key but serves nothing: fall back to the ABI.
	}
	i := uint64(0)
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], extismInputLoadU64(i))
	}
	for ; i < n; i++ {
		b[i] = byte(extismInputLoadU8(i))
	}
	return b
}

var frameMagic = [8]byte{0, 'A', 'G', 'H', 'O', 'U', 'T', '1'}

// writeOutput sets the call's output to the concatenation of parts.
func (r *runtime) writeOutput(parts ...[]byte) {
	total := 0
	for _, p := range parts {
		total += len(p)
	}
	if r.fastIO() {
		var hdr [16]byte
		copy(hdr[:], frameMagic[:])
		binary.LittleEndian.PutUint64(hdr[8:], uint64(total))
		if _, err := os.Stdout.Write(hdr[:]); err == nil {
			ok := true
			for _, p := range parts {
				if _, err := os.Stdout.Write(p); err != nil {
					ok = false
					break
				}
			}
			if ok {
				return
			}
		}
		// The host refused the frame (e.g. over its output limit): it already
		// knows and reports it; nothing more to write.
		return
	}
	buf := make([]byte, 0, total)
	for _, p := range parts {
		buf = append(buf, p...)
	}
	extismOutputSet(kernelWrite(buf), uint64(total))
}
