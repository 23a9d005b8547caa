package connectionstest

import (
	"bytes"
	"sync"
)

// LogSink keeps every log record written to it (wasmtest.Options.Logs),
// attributes included, for a test that searches them for a secret. It is
// safe for concurrent use.
type LogSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write keeps p.
func (l *LogSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns all that was written.
func (l *LogSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
