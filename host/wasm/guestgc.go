package wasm

import (
	"strconv"

	"github.com/tetratelabs/wazero"
)

// DefaultGuestGOGC is the garbage collector's target (GOGC) the host gives
// Go guests. Go's default of 100 has a plugin's collector take a quarter of
// its time extracting a PDF inside the sandbox (docs/figures.md, "Why
// ingestion is not at 5 MB/s"); at 400 it collects a fifth as often, and
// guestMemoryLimit keeps the larger heap within bounds.
const DefaultGuestGOGC = 400

// WithGuestGOGC sets the GOGC of Go guests (0: DefaultGuestGOGC; negative:
// Go's own default, 100). It only trades a guest's memory for its speed:
// guestEnv also gives every guest a soft memory limit.
func (c Config) WithGuestGOGC(percent int) Config { c.guestGOGC = percent; return c }

// guestEnv gives a guest the only environment it sees: the tuning of Go's
// garbage collector, nothing of the host's. GOMEMLIMIT is three quarters of
// the plugin's memory limit and of the idle-memory bound (whichever is
// lower): the collector works harder as the heap nears it rather than let
// a guest with a higher GOGC run into its hard limit, or grow past the
// size at which its instance is closed after every call. Non-Go guests
// ignore both variables.
func guestEnv(cfg wazero.ModuleConfig, gogc int, memoryPages uint32, maxIdle uint64) wazero.ModuleConfig {
	switch {
	case gogc == 0:
		gogc = DefaultGuestGOGC
	case gogc < 0:
		gogc = 100
	}
	limit := uint64(memoryPages) * 65536
	if maxIdle > 0 {
		limit = min(limit, maxIdle)
	}
	return cfg.WithEnv("GOGC", strconv.Itoa(gogc)).WithEnv("GOMEMLIMIT", strconv.FormatUint(limit/4*3, 10))
}
