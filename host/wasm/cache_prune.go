package wasm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// The compile cache is kept within CacheLimits. Every file in the index
// names the modules whose compile may have written it and when a start of
// one of them last marked it used. A plugin's files are all of one module:
// its instrumented form (written under the module's name) and wazero's
// native code, which appears during the compile and is attributed to the
// modules this process was compiling meanwhile (usually just one; when
// several compile at once each of their files is kept while any of them is
// used, never deleted for another's disuse).
//
// Opening the directory deletes what no start marked within MaxUnused and
// then, past MaxBytes, the least recently used files. A running host keeps
// the size too: after each compile it deletes, past MaxBytes, files no
// start marked within touchEvery (never the ones just compiled or started).

// touchEvery is how stale a file's mark may grow before a start renews it:
// most starts then leave the index unwritten.
const touchEvery = time.Hour

// startCompile counts a compile of module in flight and returns the
// modules in flight now, this one included.
func (d *diskCache) startCompile(module string) []string {
	d.cmu.Lock()
	defer d.cmu.Unlock()
	d.compiling[module]++
	return d.compilingNow()
}

// endCompile ends a compile of module and returns owners with the modules
// in flight now: the modules a file that appeared meanwhile may belong to.
func (d *diskCache) endCompile(module string, owners []string) []string {
	d.cmu.Lock()
	defer d.cmu.Unlock()
	owners = union(owners, d.compilingNow())
	if d.compiling[module]--; d.compiling[module] <= 0 {
		delete(d.compiling, module)
	}
	return owners
}

func (d *diskCache) compilingNow() []string {
	out := make([]string, 0, len(d.compiling))
	for m := range d.compiling {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// union returns the sorted set of a's and b's elements.
func union(a, b []string) []string {
	out := slices.Concat(a, b)
	sort.Strings(out)
	return slices.Compact(out)
}

// touch marks module's files used at now (Unix seconds) where their mark
// is touchEvery old or older; it reports whether it changed the index.
func (d *diskCache) touch(index map[string]cacheEntry, module string, now int64) bool {
	if module == "" {
		return false
	}
	changed := false
	for rel, e := range index {
		if now-e.Used >= int64(touchEvery/time.Second) && slices.Contains(e.Modules, module) {
			e.Used = now
			index[rel] = e
			changed = true
		}
	}
	return changed
}

// prune deletes the files no start marked within the limits' MaxUnused,
// then, while the files' total passes MaxBytes, the least recently used of
// those not marked within spare. It reports whether it changed the index.
func (d *diskCache) prune(index map[string]cacheEntry, spare time.Duration) bool {
	now := d.now()
	unusedSince := now.Add(-d.limits.MaxUnused).Unix()
	spareSince := now.Add(-spare).Unix()
	var total int64
	for _, e := range index {
		total += e.Size
	}
	type candidate struct {
		rel  string
		used int64
	}
	var old, lru []candidate
	for rel, e := range index {
		switch {
		case e.Used < unusedSince:
			old = append(old, candidate{rel, e.Used})
		case spare == 0 || e.Used < spareSince:
			lru = append(lru, candidate{rel, e.Used})
		}
	}
	var n int
	var freed int64
	remove := func(rel string) {
		err := os.Remove(filepath.Join(d.dir, filepath.FromSlash(rel)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logger.Warn("compile cache: cannot delete an old file", "dir", d.dir, "file", rel, "err", err)
			return
		}
		n++
		freed += index[rel].Size
		total -= index[rel].Size
		delete(index, rel)
	}
	for _, c := range old {
		remove(c.rel)
	}
	if unused := n; unused > 0 {
		d.logger.Info("compile cache: deleted files no start used recently",
			"dir", d.dir, "files", unused, "bytes", freed, "unused_for", d.limits.MaxUnused)
	}
	if total > d.limits.MaxBytes {
		n, freed = 0, 0
		sort.Slice(lru, func(i, j int) bool {
			if lru[i].used != lru[j].used {
				return lru[i].used < lru[j].used
			}
			return lru[i].rel < lru[j].rel
		})
		for _, c := range lru {
			if total <= d.limits.MaxBytes {
				break
			}
			remove(c.rel)
		}
		if n > 0 {
			d.logger.Info("compile cache: deleted the least recently used files to keep its size",
				"dir", d.dir, "files", n, "bytes", freed, "size", total, "max_bytes", d.limits.MaxBytes)
		}
	}
	return len(old) > 0 || n > 0
}
