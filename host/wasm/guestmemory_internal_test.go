package wasm

import (
	"runtime"
	"testing"
	"unsafe"
)

// TestGuestMemoryGrowsInPlace: a growth keeps the memory where it is (no
// copy), keeps what the guest wrote, and reads as zeros past it; growing
// past the reservation or after Free fails as memory.grow does.
func TestGuestMemoryGrowsInPlace(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("guest memory is reserved on Linux and macOS only")
	}
	var g guestMemory
	lm := g.allocator().Allocate(0, 16<<16)
	b := lm.Reallocate(1 << 16)
	if len(b) != 1<<16 || !g.mapped() {
		t.Fatalf("first page: %d bytes, mapped %v; want 65536 bytes outside the Go heap", len(b), g.mapped())
	}
	b[0], b[len(b)-1] = 7, 9
	grown := lm.Reallocate(3 << 16)
	if unsafe.SliceData(grown) != unsafe.SliceData(b) {
		t.Fatal("growing moved the memory")
	}
	if grown[0] != 7 || grown[1<<16-1] != 9 {
		t.Fatal("growing lost what the guest wrote")
	}
	for i, c := range grown[1<<16:] {
		if c != 0 {
			t.Fatalf("byte %d of the grown part is %d, want 0", 1<<16+i, c)
		}
	}
	if cap(grown) != len(grown) {
		t.Fatalf("capacity %d past the length %d: the uncommitted rest would be reachable", cap(grown), len(grown))
	}
	if lm.Reallocate(17<<16) != nil {
		t.Fatal("grew past the maximum")
	}
	lm.Free()
	if g.mapped() {
		t.Fatal("still mapped after Free with no guest running")
	}
	if lm.Reallocate(4<<16) != nil {
		t.Fatal("grew after Free")
	}
	lm.Free() // a second Free is harmless
}

// TestGuestMemoryFreeWaitsForRunningGuest: a Free while a guest runs (an
// abandoned call's close) leaves the memory mapped and usable until the
// run ends; the run's end unmaps it.
func TestGuestMemoryFreeWaitsForRunningGuest(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("guest memory is reserved on Linux and macOS only")
	}
	var g guestMemory
	lm := g.allocator().Allocate(0, 4<<16)
	b := lm.Reallocate(2 << 16)
	g.enter()
	g.enter()
	lm.Free()
	b[len(b)-1] = 1 // would fault if unmapped
	if !g.mapped() {
		t.Fatal("unmapped under a running guest")
	}
	g.leave()
	if !g.mapped() {
		t.Fatal("unmapped while a second run was under way")
	}
	g.leave()
	if g.mapped() {
		t.Fatal("still mapped after the last run ended")
	}
}
