package wasm

import (
	"sync"

	"github.com/tetratelabs/wazero/experimental"
)

// guestMemory backs one instance's linear memory outside the Go heap where
// the system allows it (guestmemory_unix.go: Linux and macOS): the whole maximum is reserved
// once as address space and committed as the guest grows, so a growth never
// copies the memory (wazero's default appends to a Go slice, which leaves
// the old copy to the collector: a guest growing to 256 MiB passes through
// about twice that), and closing the instance unmaps it at once instead of
// leaving it to the collector and the scavenger.
//
// Wazero frees the memory when the module closes, and the host closes an
// abandoned instance's module while its guest may still run (giveUp; the
// close-on-context-done mode closes it from wazero's own goroutine too): an
// unmapped memory under a running guest would crash the process. So every
// run of guest code is bracketed by enter and leave, and a Free that comes
// while a guest runs only marks the memory, which the last leave unmaps.
type guestMemory struct {
	mu     sync.Mutex
	region []byte // the reservation: max bytes, inaccessible past committed
	// committed is how much of region is readable and writable.
	committed int
	users     int  // guest runs under way (enter without leave)
	freed     bool // Free was called: nothing more is committed
	unmapped  bool
	heap      []byte // the fallback when nothing could be reserved: Go heap
	onHeap    bool
}

// allocator hands wazero this memory for the instance's one linear memory.
func (g *guestMemory) allocator() experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.region == nil && !g.onHeap {
			r, err := reserveMemory(maxBytes)
			if err != nil || r == nil {
				// Nothing reserved (no such system call, or the address space
				// is exhausted): the guest runs on the Go heap as wazero would.
				g.onHeap = true
				g.heap = make([]byte, 0, capBytes)
			} else {
				g.region = r
			}
		}
		return g
	})
}

// Reallocate implements experimental.LinearMemory: the memory as size
// bytes, nil when it cannot grow (the guest's memory.grow then fails).
func (g *guestMemory) Reallocate(size uint64) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.freed {
		return nil
	}
	if g.onHeap {
		if n := uint64(len(g.heap)); size > n {
			g.heap = append(g.heap, make([]byte, size-n)...)
		}
		return g.heap[:size]
	}
	if size > uint64(len(g.region)) {
		return nil
	}
	if end := int(size); end > g.committed {
		if err := commitMemory(g.region[g.committed:pageAlign(end, len(g.region))]); err != nil {
			return nil
		}
		g.committed = pageAlign(end, len(g.region))
	}
	return g.region[:size:size]
}

// Free implements experimental.LinearMemory: the memory is unmapped now,
// or by the last guest run still under way. It may be called more than once.
func (g *guestMemory) Free() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.freed = true
	g.heap = nil
	g.release()
}

// enter marks a guest run under way on the memory.
func (g *guestMemory) enter() {
	g.mu.Lock()
	g.users++
	g.mu.Unlock()
}

// leave ends a run that enter began, unmapping a memory freed meanwhile.
func (g *guestMemory) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.users--
	g.release()
}

// release unmaps a freed memory no guest runs on (under mu).
func (g *guestMemory) release() {
	if !g.freed || g.users > 0 || g.unmapped || g.region == nil {
		return
	}
	g.unmapped = true
	_ = unmapMemory(g.region)
	g.region = nil
}

// mapped reports whether the memory lives outside the Go heap (tests).
func (g *guestMemory) mapped() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.region != nil
}

// pageAlign rounds n up to the system's page size, within limit.
func pageAlign(n, limit int) int {
	ps := pageSize
	return min((n+ps-1)/ps*ps, limit)
}
