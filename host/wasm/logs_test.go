package wasm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/wasm"
)

// logCapture is a slog handler that keeps every record.
type logCapture struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCapture) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *logCapture) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logCapture) WithGroup(string) slog.Handler      { return l }

// plugin returns the records the plugin logged itself (attribute plugin =
// logflood, no "dropped" attribute) and the truncation warnings.
func (l *logCapture) plugin() (msgs []string, warnings []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.records {
		var fromPlugin, summary bool
		r.Attrs(func(a slog.Attr) bool {
			fromPlugin = fromPlugin || (a.Key == "plugin" && a.Value.String() == "logflood")
			summary = summary || a.Key == "dropped"
			return true
		})
		switch {
		case fromPlugin && summary:
			warnings = append(warnings, r.Message)
		case fromPlugin:
			msgs = append(msgs, r.Message)
		}
	}
	return msgs, warnings
}

func logHost(t *testing.T) (*wasm.Plugin, *logCapture) {
	t.Helper()
	logs := &logCapture{}
	h := newHost(t, wasm.EgressOptions{}, func(c wasm.Config) wasm.Config { return c.WithLogger(slog.New(logs)) })
	return load(t, h, "logflood"), logs
}

func flood(t *testing.T, p *wasm.Plugin, count, size int, level string) {
	t.Helper()
	if r := call(t, p, "flood", map[string]any{"count": count, "size": size, "level": level}); !r.OK || r.Text != "logged" {
		t.Fatalf("flood: %+v", r.Error)
	}
}

// TestPluginLogLimitsPerCall: a hostile plugin logging in a loop gets at most
// 100 messages and 64 KiB into the host's log per call, each message clipped,
// and one warning saying how many were dropped.
func TestPluginLogLimitsPerCall(t *testing.T) {
	cases := []struct {
		name        string
		count, size int
		level       string
		want        int    // messages forwarded
		warning     string // "": none
		longest     int    // upper bound of a forwarded message's length
	}{
		{"few small messages", 10, 50, "info", 10, "", 50},
		{"a loop of 10,000 messages", 10000, 10, "warn", 100, "plugin log output truncated: 9900 messages dropped", 10},
		{"64 KiB per call", 50, 2000, "error", 32, "plugin log output truncated: 18 messages dropped", 2000},
		{"one 8 MiB message is clipped", 1, 8 << 20, "info", 1, "", 4<<10 + 64},
		{"below the plugin log level: ignored, not counted", 10000, 10, "debug", 0, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, logs := logHost(t)
			flood(t, p, tc.count, tc.size, tc.level)
			msgs, warnings := logs.plugin()
			if len(msgs) != tc.want {
				t.Errorf("%d messages forwarded, want %d", len(msgs), tc.want)
			}
			for _, m := range msgs {
				if len(m) > tc.longest {
					t.Fatalf("a forwarded message has %d bytes, want at most %d", len(m), tc.longest)
				}
			}
			if tc.size > 4<<10 && (len(msgs) != 1 || !strings.HasSuffix(msgs[0], fmt.Sprintf("[%d more bytes clipped]", tc.size-4<<10))) {
				t.Errorf("the long message does not say it was clipped: %.80q…", msgs)
			}
			switch {
			case tc.warning == "" && len(warnings) != 0:
				t.Errorf("warnings %q, want none", warnings)
			case tc.warning != "" && (len(warnings) != 1 || warnings[0] != tc.warning):
				t.Errorf("warnings %q, want exactly %q", warnings, tc.warning)
			}
		})
	}
}

// TestPluginLogRateAcrossCalls: calls in a row share the plugin's budget, so
// a plugin cannot flood the log by making many calls. The bound is computed
// from the time the calls took (the bucket refills at 8 KiB/s), so a slow
// machine only loosens it.
func TestPluginLogRateAcrossCalls(t *testing.T) {
	p, logs := logHost(t)
	const size, cost = 3000, 3000 + 128
	start := time.Now()
	for i := 0; i < 30; i++ {
		flood(t, p, 100, size, "info")
	}
	elapsed := time.Since(start)
	msgs, warnings := logs.plugin()
	bound := int((256<<10+elapsed.Seconds()*(8<<10))/cost) + 1
	if len(msgs) > bound {
		t.Errorf("%d messages forwarded in %v, the rate allows at most %d", len(msgs), elapsed, bound)
	}
	if len(warnings) == 0 || len(warnings) > int(elapsed/time.Second)+1 {
		t.Errorf("%d truncation warnings in %v, want 1 to one a second", len(warnings), elapsed)
	}
	// Every dropped message is counted: forwarded plus reported plus not yet
	// reported (the last calls' drops wait for the next warning) is the total.
	reported := 0
	for _, w := range warnings {
		var n int
		fmt.Sscanf(w, "plugin log output truncated: %d messages dropped", &n)
		reported += n
	}
	if len(msgs)+reported > 30*100 || reported == 0 {
		t.Errorf("forwarded %d + reported dropped %d, of 3000", len(msgs), reported)
	}
}

// TestPluginStdioIsNotLogged: a plugin writing megabytes to stderr and stdout
// puts none of it in the host's log; a failing call quotes a bounded excerpt.
func TestPluginStdioIsNotLogged(t *testing.T) {
	p, logs := logHost(t)
	for _, fail := range []bool{false, true} {
		raw, _ := json.Marshal(map[string]any{"bytes": 4 << 20, "fail": fail})
		r := p.Call(context.Background(), "spew", raw, nil)
		if fail {
			if r.OK || len(r.Error.Message) > 9<<10 {
				t.Fatalf("failed call: ok=%v, error message of %d bytes", r.OK, len(r.Error.Message))
			}
			continue
		}
		if !r.OK {
			t.Fatalf("spew: %+v", r.Error)
		}
	}
	logs.mu.Lock()
	defer logs.mu.Unlock()
	total := 0
	for _, rec := range logs.records {
		total += len(rec.Message)
		rec.Attrs(func(a slog.Attr) bool { total += len(a.Value.String()); return true })
	}
	if total > 16<<10 {
		t.Errorf("%d bytes reached the log from a plugin writing 16 MiB to stdio", total)
	}
}
