package wasm

import (
	"fmt"
	"sync"
)

// vars are a plugin's Extism variables: shared by all its instances, bounded in
// total size, and kept for the host's lifetime.
type vars struct {
	mu    sync.Mutex
	m     map[string][]byte
	size  int
	limit int
}

func newVars(limit int) *vars { return &vars{m: map[string][]byte{}, limit: limit} }

func (v *vars) get(k string) ([]byte, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b, ok := v.m[k]
	return b, ok
}

func (v *vars) set(k string, val []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	old, had := v.m[k]
	n := v.size + len(k) + len(val)
	if had {
		n -= len(k) + len(old)
	}
	if n > v.limit {
		return fmt.Errorf("plugin variables would exceed %d bytes", v.limit)
	}
	v.m[k] = append([]byte(nil), val...)
	v.size = n
	return nil
}

func (v *vars) del(k string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if old, ok := v.m[k]; ok {
		v.size -= len(k) + len(old)
		delete(v.m, k)
	}
}
