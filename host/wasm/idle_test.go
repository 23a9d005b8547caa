package wasm_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
)

// TestIdleInstancesClosed: an instance idle for the idle timeout is closed
// (the pool then holds nothing and the next call starts a fresh one), one
// idle for less is kept, and the closing runs the idle release once. The
// expiry is driven with an explicit clock reading, not by waiting.
func TestIdleInstancesClosed(t *testing.T) {
	released := make(chan struct{}, 4)
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config {
		return c.WithIdleTimeout(time.Hour).WithIdleRelease(func() { released <- struct{}{} })
	})
	p := load(t, h, "echo")
	call(t, p, "echo", map[string]any{"text": "a"})
	if n := p.ExpireIdleForTest(time.Now().Add(59 * time.Minute)); n != 0 || p.LiveForTest() != 1 {
		t.Fatalf("before the idle timeout: %d closed, %d live; want 0 closed, 1 live", n, p.LiveForTest())
	}
	if r := call(t, p, "echo", map[string]any{"text": "b"}); !r.Stats.Reused {
		t.Fatal("an instance idle for less than the timeout was not reused")
	}
	if n := p.ExpireIdleForTest(time.Now().Add(time.Hour)); n != 1 || p.LiveForTest() != 0 {
		t.Fatalf("after the idle timeout: %d closed, %d live; want 1 closed, 0 live", n, p.LiveForTest())
	}
	select {
	case <-released:
	case <-time.After(time.Minute):
		t.Fatal("the idle release did not run after idle instances were closed")
	}
	if r := call(t, p, "echo", map[string]any{"text": "c"}); !r.OK || r.Stats.Reused {
		t.Fatalf("the call after the expiry: %+v, want a fresh instance", r.Stats)
	}
	if p.LiveForTest() != 1 {
		t.Fatalf("%d live after a fresh call, want 1", p.LiveForTest())
	}
}

// TestIdleTimeoutOff: without an idle timeout an idle instance is kept
// however long it waits.
func TestIdleTimeoutOff(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithIdleTimeout(0) })
	p := load(t, h, "echo")
	call(t, p, "echo", map[string]any{"text": "a"})
	if n := p.ExpireIdleForTest(time.Now().Add(1000 * time.Hour)); n != 0 || p.LiveForTest() != 1 {
		t.Fatalf("%d closed, %d live; want the idle instance kept", n, p.LiveForTest())
	}
}

// TestIdleInstanceShedsHostBuffers: an instance that returned a large
// result goes idle without its output frame or a grown kernel arena; the
// caller's result is intact.
func TestIdleInstanceShedsHostBuffers(t *testing.T) {
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "echo")
	text := strings.Repeat("y", 6<<20)
	r := call(t, p, "echo", map[string]any{"text": text})
	if !r.OK || r.Text != text {
		t.Fatalf("echo of 6 MiB: ok %v, %d bytes back", r.OK, len(r.Text))
	}
	if n := p.IdleHostBytesForTest(); n > 2<<20 {
		t.Fatalf("the idle instance keeps %d bytes of host buffers after a 6 MiB result, want at most %d", n, 2<<20)
	}
}

// TestGuestMemoryOutsideGoHeap: an instance's linear memory is mapped
// outside the Go heap (so that growing it copies nothing and closing it
// gives it back at once), on the systems that allow it.
func TestGuestMemoryOutsideGoHeap(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("guest memory is reserved on Linux and macOS only")
	}
	h := newHost(t, wasm.EgressOptions{}, nil)
	p := load(t, h, "echo")
	text := strings.Repeat("z", 4<<20)
	if r := call(t, p, "echo", map[string]any{"text": text}); !r.OK || r.Text != text {
		t.Fatalf("echo of 4 MiB: ok %v, %d bytes back", r.OK, len(r.Text))
	}
	if idle, mapped := p.IdleMemoryMappedForTest(); idle != 1 || mapped != 1 {
		t.Fatalf("%d idle instances, %d with mapped memory; want 1 and 1", idle, mapped)
	}
}
