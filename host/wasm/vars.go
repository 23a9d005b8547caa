package wasm

import (
	"fmt"
	"sync"
)

// vars are a plugin's Extism variables, kept for the host's lifetime and
// shared by all its instances, but partitioned by tenant: a variable one
// tenant's call sets is invisible to every other tenant's calls. Each
// tenant's variables are bounded in total size.
type vars struct {
	mu     sync.Mutex
	tenant map[string]*varSet
	limit  int
}

type varSet struct {
	m    map[string][]byte
	size int
}

func newVars(limit int) *vars { return &vars{tenant: map[string]*varSet{}, limit: limit} }

func (v *vars) get(tenant, k string) ([]byte, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.tenant[tenant]
	if s == nil {
		return nil, false
	}
	b, ok := s.m[k]
	return b, ok
}

func (v *vars) set(tenant, k string, val []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.tenant[tenant]
	if s == nil {
		s = &varSet{m: map[string][]byte{}}
	}
	old, had := s.m[k]
	n := s.size + len(k) + len(val)
	if had {
		n -= len(k) + len(old)
	}
	if n > v.limit {
		return fmt.Errorf("plugin variables would exceed %d bytes", v.limit)
	}
	s.m[k] = append([]byte(nil), val...)
	s.size = n
	v.tenant[tenant] = s
	return nil
}

func (v *vars) del(tenant, k string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.tenant[tenant]
	if s == nil {
		return
	}
	if old, ok := s.m[k]; ok {
		s.size -= len(k) + len(old)
		delete(s.m, k)
	}
	if len(s.m) == 0 {
		delete(v.tenant, tenant)
	}
}
