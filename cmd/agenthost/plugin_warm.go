package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/wasm"
)

// pluginWarmCmd compiles the built-in plugins into the machine's compile
// cache, so that the first `serve` or `plugin call` on this machine finds
// them compiled (`make build` runs it). Plugins compile -parallel at a time
// (one per core by default), largest first so that the longest compile does
// not start last; each compile's memory is about proportional to its
// module, so -parallel 1 bounds the peak to the largest one's.
func pluginWarmCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plugin warm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cache := addCacheFlags(fs)
	parallel := fs.Int("parallel", runtime.GOMAXPROCS(0), "plugins compiled at once")
	if ok, err := parseArgs(fs, args); !ok {
		return err
	}
	if _, err := checkSettings("plugin", fs); err != nil {
		return err
	}
	limits, err := cache.limits()
	if err != nil {
		return err
	}
	if *parallel < 1 {
		return fmt.Errorf("plugin warm: -parallel must be at least 1, got %d", *parallel)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg, err := wasm.NewRegistry(builtin.NewCapabilities().List(wasm.EgressOptions{})...)
	if err != nil {
		return err
	}
	h, err := wasm.New(ctx, wasm.NewConfig().WithLogger(logger).WithCapabilities(reg).WithCompilationCacheDir(*cache.dir).WithCompilationCacheLimits(limits))
	if err != nil {
		return err
	}
	defer h.Close(context.WithoutCancel(ctx))
	srcs, err := builtin.Sources()
	if err != nil {
		return err
	}
	start := time.Now()
	slices.SortStableFunc(srcs, func(a, b wasm.Source) int { return len(b.Module) - len(a.Module) })
	plugins := make([]*wasm.Plugin, len(srcs))
	for i, s := range srcs {
		if plugins[i], err = h.Load(ctx, s); err != nil {
			return err
		}
	}
	var (
		mu   sync.Mutex // orders the lines and errs
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, *parallel)
	)
	for _, p := range plugins {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t0 := time.Now()
			err := p.Warm(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			fmt.Fprintf(stdout, "warm %-14s %6.2f s\n", p.Name(), time.Since(t0).Seconds())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d built-in plugins ready in %s (%.1f s)\n", len(srcs), *cache.dir, time.Since(start).Seconds())
	return nil
}
