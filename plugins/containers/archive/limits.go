package archive

// Limits bound one resolution. A zero or negative field takes its default
// (DefaultLimits), so Limits{} behaves like DefaultLimits().
type Limits struct {
	// MaxDepth is how deeply containers may nest. The input is depth 0, its
	// members depth 1; a container at depth MaxDepth is listed but not opened.
	MaxDepth int
	// MaxTotalBytes bounds the sum of the sizes of all entries inside archives,
	// nested containers included (their bytes are expanded to be read). Files
	// of a folder given to ResolveFS are not extracted and do not count.
	MaxTotalBytes int64
	// MaxFileBytes bounds one entry; a larger entry is a Problem, not the end.
	MaxFileBytes int64
	// MaxFiles bounds the entries and problems of one walk (directories
	// included: each costs work and memory).
	MaxFiles int
	// MaxRatio is the largest expansion (expanded over compressed bytes) an
	// entry, a compressed stream or the whole walk may reach once it has
	// expanded more than RatioFloor bytes. The floor keeps small, very
	// compressible files (blank images, sparse tables) legal.
	MaxRatio   float64
	RatioFloor int64
}

// DefaultLimits guard against archive bombs (docs/knowledge.md): depth 5,
// 500 MiB extracted, 10,000 files, plus a 100:1 compression ratio beyond
// 8 MiB.
func DefaultLimits() Limits {
	return Limits{
		MaxDepth:      5,
		MaxTotalBytes: 500 << 20,
		MaxFileBytes:  500 << 20,
		MaxFiles:      10_000,
		MaxRatio:      100,
		RatioFloor:    8 << 20,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = d.MaxRatio
	}
	if l.RatioFloor <= 0 {
		l.RatioFloor = d.RatioFloor
	}
	return l
}

// bomb reports whether out bytes expanded from in bytes exceed the ratio.
func (l Limits) bomb(out, in int64) bool {
	return out > l.RatioFloor && float64(out) > l.MaxRatio*float64(in)
}

// nestedBudget is the largest nested container read into memory (a zip
// behind a compressed entry needs random access): a sixteenth of the total,
// 31 MiB by default.
func (l Limits) nestedBudget() int64 { return min(l.MaxFileBytes, l.MaxTotalBytes/16) }

// heldBudget bounds the nested containers in memory at once along one path
// of the walk (each level may hold one): an eighth of the total.
func (l Limits) heldBudget() int64 { return l.MaxTotalBytes / 8 }

// streamCap bounds what one compressed tar stream may expand to: the total
// plus the tar headers and padding of MaxFiles entries.
func (l Limits) streamCap() int64 { return l.MaxTotalBytes + int64(l.MaxFiles)*1536 }
