package keyed

import (
	"sync"
)

// Mutex is one mutex per key, dropped when nobody holds or waits.
type Mutex struct {
	mu sync.Mutex
	m  map[string]*entry
}

type entry struct {
	mu sync.Mutex
	n  int
}

func (k *Mutex) Lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*entry{}
	}
	e := k.m[key]
	if e == nil {
		e = &entry{}
		k.m[key] = e
	}
	e.n++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		if e.n--; e.n == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
