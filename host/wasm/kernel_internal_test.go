package wasm

import "testing"

// A guest that allocates, hands over and frees one message at a time (a
// log line, a capability request) must not exhaust the arena: freeing the
// newest block gives its bytes back; older blocks stay where they are.
func TestKernelFreeReclaimsTheNewestBlock(t *testing.T) {
	k := newKernel(1 << 20)
	keep, err := k.write([]byte("kept"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10_000; i++ { // 10,000 × 1000 bytes through a 1 MiB arena
		off, err := k.alloc(1000)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		k.free(off)
	}
	if b, err := k.block(keep); err != nil || string(b) != "kept" {
		t.Fatalf("the older block: %q, %v", b, err)
	}
	// A block freed out of order stays allocated until the call ends.
	a, _ := k.alloc(100)
	b, _ := k.alloc(100)
	k.free(a)
	if _, err := k.block(b); err != nil {
		t.Fatal(err)
	}
	if c, _ := k.alloc(8); c <= b {
		t.Fatalf("new block at %d overlaps the live one at %d", c, b)
	}
	// Reused bytes are zeroed.
	off, _ := k.alloc(8)
	copy(k.mem[off:], "secret!!")
	k.free(off)
	off2, _ := k.alloc(8)
	if b, _ := k.block(off2); string(b) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("a reused block holds %q", b)
	}
}
