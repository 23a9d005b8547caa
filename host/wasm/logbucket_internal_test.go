package wasm

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestLogBucket drives the per-plugin log budget with a fake clock.
func TestLogBucket(t *testing.T) {
	var b logBucket
	t0 := time.Unix(1000, 0)
	spent := 0
	for b.take(t0, 1000) {
		spent++
	}
	if spent != logBucketBytes/1000 {
		t.Fatalf("a full bucket gave %d messages of 1000, want %d", spent, logBucketBytes/1000)
	}
	if b.take(t0.Add(100*time.Millisecond), 1000) {
		t.Fatal("100 ms refilled more than 1000 bytes")
	}
	if !b.take(t0.Add(200*time.Millisecond), 1000) { // 0.2 s × 8 KiB/s ≥ 1000 + the 100 ms before
		t.Fatal("200 ms did not refill 1000 bytes")
	}
	// A long pause refills the bucket to its size, no more.
	spent = 0
	for b.take(t0.Add(time.Hour), 1000) {
		spent++
	}
	if spent != logBucketBytes/1000 {
		t.Fatalf("after an hour: %d messages, want %d", spent, logBucketBytes/1000)
	}

	// Summaries: at most one a second, drops in between carried over.
	if n, ok := b.summary(t0, 5); !ok || n != 5 {
		t.Fatalf("first summary = %d %v", n, ok)
	}
	if _, ok := b.summary(t0.Add(500*time.Millisecond), 7); ok {
		t.Fatal("second summary within a second")
	}
	if _, ok := b.summary(t0.Add(600*time.Millisecond), 0); ok {
		t.Fatal("a call without drops reported early")
	}
	if n, ok := b.summary(t0.Add(1100*time.Millisecond), 1); !ok || n != 8 {
		t.Fatalf("carried summary = %d %v, want 8", n, ok)
	}
	if _, ok := b.summary(t0.Add(time.Hour), 0); ok {
		t.Fatal("summary with nothing dropped")
	}
}

func TestClipLogMessage(t *testing.T) {
	long := strings.Repeat("é", logMaxMessage) // 2 bytes each: the cut falls inside a rune or not
	for _, msg := range []string{"short", long, "a" + long, "bad \xff utf-8"} {
		got := clipLogMessage([]byte(msg))
		if !utf8.ValidString(got) || len(got) > logMaxMessage+40 {
			t.Errorf("clip(%d bytes) = %d bytes, valid %v", len(msg), len(got), utf8.ValidString(got))
		}
		if len(msg) > logMaxMessage && !strings.Contains(got, "more bytes clipped") {
			t.Errorf("clip(%d bytes) does not say so", len(msg))
		}
	}
}
