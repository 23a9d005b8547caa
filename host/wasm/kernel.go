package wasm

import (
	"errors"
	"fmt"
)

// kernel is the Extism kernel's state for one instance, kept in Go memory.
//
// Extism guests never touch this memory directly: they move bytes in and out with
// host calls (alloc, store_u64, load_u64, input_load_u64 ...), so a Go-side arena
// behaves exactly like the reference kernel while every access is bounds-checked
// here. Offsets are 1-based so that 0 stays the ABI's null.
type kernel struct {
	mem    []byte
	blocks map[uint64]uint64 // offset → length of live blocks
	limit  uint64            // arena cap, bytes

	input  []byte
	output []byte // set by output_set (a copy)
	err    string // set by error_set

	outOffset, outLen uint64
}

const kernelBase = 8

var errKernelFull = errors.New("extism kernel memory limit reached")

func newKernel(limit uint64) *kernel {
	return &kernel{mem: make([]byte, kernelBase, 64<<10), blocks: map[uint64]uint64{}, limit: limit}
}

// reset starts a new call: every block of the previous call is forgotten.
func (k *kernel) reset(input []byte) {
	k.mem = k.mem[:kernelBase]
	clear(k.blocks)
	k.input = input
	k.output = nil
	k.err = ""
	k.outOffset, k.outLen = 0, 0
	// A huge arena from one call should not pin memory for the instance's life.
	if cap(k.mem) > 16<<20 {
		k.mem = make([]byte, kernelBase, 64<<10)
	}
}

func (k *kernel) alloc(n uint64) (uint64, error) {
	if n == 0 {
		return 0, nil
	}
	off := uint64(len(k.mem))
	// Blocks are 8-byte aligned and padded, as guests store whole u64 words
	// and may write the last one past a block's odd end.
	padded := (n + 7) &^ 7
	if off+padded > k.limit || padded < n {
		return 0, fmt.Errorf("%w (%d bytes)", errKernelFull, k.limit)
	}
	k.mem = append(k.mem, make([]byte, padded)...)
	k.blocks[off] = n
	return off, nil
}

// free releases a block. The arena is a bump allocator, so only the newest
// block's bytes are reclaimed: enough for the common pattern of a guest
// that allocates, hands over and frees one message at a time (logs,
// capability requests), which would otherwise exhaust the arena.
func (k *kernel) free(off uint64) {
	n, ok := k.blocks[off]
	if !ok {
		return
	}
	delete(k.blocks, off)
	if off+((n+7)&^7) == uint64(len(k.mem)) {
		k.mem = k.mem[:off]
	}
}

func (k *kernel) length(off uint64) uint64 { return k.blocks[off] }

// block returns the bytes of the live block at off.
func (k *kernel) block(off uint64) ([]byte, error) {
	n, ok := k.blocks[off]
	if !ok {
		return nil, fmt.Errorf("extism kernel: no block at offset %d", off)
	}
	return k.mem[off : off+n], nil
}

func (k *kernel) span(off, n uint64) ([]byte, error) {
	if off < kernelBase || off+n > uint64(len(k.mem)) || off+n < off {
		return nil, fmt.Errorf("extism kernel: access [%d,+%d) out of bounds", off, n)
	}
	return k.mem[off : off+n], nil
}

// write allocates a block holding b.
func (k *kernel) write(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, nil
	}
	off, err := k.alloc(uint64(len(b)))
	if err != nil {
		return 0, err
	}
	copy(k.mem[off:], b)
	return off, nil
}
