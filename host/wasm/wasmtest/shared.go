package wasmtest

import (
	"sync"
	"testing"

	"github.com/agenthost/agenthost/host/wasm"
)

// Shared is one host for every test of a package that asks for it: the
// plugins are compiled once, and the host lives as long as the test binary
// (it is never closed under a later test). Declare it at package level:
//
//	var plugins = wasmtest.NewShared("notebook", "echo")
//
// and call plugins.Host(t) in each test.
type Shared struct {
	names []string
	once  sync.Once
	h     *wasm.Host
}

// NewShared describes a shared host with the named test plugins loaded
// and warmed; nothing is built until a test asks for it.
func NewShared(names ...string) *Shared { return &Shared{names: names} }

// Host returns the shared host, building it on the first call. A build that
// fails fails the test that asked with the reason, and every later one
// with a pointer to it.
func (s *Shared) Host(tb testing.TB) *wasm.Host {
	tb.Helper()
	s.once.Do(func() {
		s.h = newHost(forBinary{tb}, wasm.NewConfig(), Options{Warm: true}, s.names...)
	})
	if s.h == nil {
		tb.Fatalf("wasmtest: the shared host of %v failed to build in an earlier test (see that test's failure)", s.names)
	}
	return s.h
}

// forBinary is the building test, but what the host registers for cleanup
// is not run when that test ends: the host serves the tests after it.
type forBinary struct{ testing.TB }

func (forBinary) Cleanup(func()) {}
