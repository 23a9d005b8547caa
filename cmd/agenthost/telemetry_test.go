package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/testenv"
)

// worker runs `agenthost worker` in this process on database, serving
// /metrics on a free port, until stop is called or the test ends; it
// returns the metrics URL.
func startWorker(t *testing.T, database string) (metrics string, stop func()) {
	t.Helper()
	addr, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"worker", "-database", database, "-data", filepath.Join(dir, "data"), "-metrics-addr", addr}, io.Discard, logs)
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker: %v\n%s", err, logs.String())
			}
		case <-time.After(time.Minute):
			t.Error("the worker did not stop within a minute")
		}
	}
	t.Cleanup(stop)
	return "http://" + addr + "/metrics", stop
}

var exporterLine = regexp.MustCompile(`(?m)^agenthost_database_gauges_exporter (\d)$`)

// scrape returns whether the process at url says it exports the database
// gauges, and whether its scrape holds them; ok is false while it does not
// answer or has not decided yet.
func scrape(url string) (exports, hasGauges, ok bool) {
	resp, err := http.Get(url)
	if err != nil {
		return false, false, false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := exporterLine.FindSubmatch(body)
	if resp.StatusCode != http.StatusOK || m == nil {
		return false, false, false
	}
	return string(m[1]) == "1", regexp.MustCompile(`(?m)^agenthost_workflows\{`).Match(body), true
}

// TestDatabaseGaugesFromOneProcess: two workers on one database both serve
// /metrics, but only one exports the gauges read from the database (so a
// sum() over the processes counts them once), and says so; when it stops,
// the other takes over once the stopped one's heartbeat has lapsed.
func TestDatabaseGaugesFromOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two workers on PostgreSQL")
	}
	database := testenv.Postgres(t)
	if _, stderr, err := run0(t, "migrate", "-database", database); err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	urls := make([]string, 2)
	stops := make([]func(), 2)
	for i := range urls {
		urls[i], stops[i] = startWorker(t, database)
	}
	// Both processes beat within a few seconds; until then each may say
	// it does not export.
	exporter := -1
	deadline := time.Now().Add(hangGuard)
	for exporter < 0 {
		if time.Now().After(deadline) {
			t.Fatal("no single exporter of the database gauges")
		}
		time.Sleep(200 * time.Millisecond)
		var flags [2]bool
		answered := 0
		for i, u := range urls {
			exports, gauges, ok := scrape(u)
			if !ok {
				break
			}
			if exports != gauges {
				t.Fatalf("process %d: exporter flag %v, gauges present %v", i, exports, gauges)
			}
			flags[i] = exports
			answered++
		}
		if answered == 2 && flags[0] != flags[1] {
			exporter = 0
			if flags[1] {
				exporter = 1
			}
		}
	}
	other := 1 - exporter
	stops[exporter]()
	for {
		if time.Now().After(deadline) {
			t.Fatal("the remaining worker never took over the database gauges")
		}
		if exports, gauges, ok := scrape(urls[other]); ok && exports && gauges {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}
