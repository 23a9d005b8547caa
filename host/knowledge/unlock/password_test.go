package unlock

import (
	"testing"
	"time"
)

// TestPasswordAttempts: PasswordAttempts per file within PasswordWindow,
// counted per file, and attempts older than the window no longer count.
func TestPasswordAttempts(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	u := New(nil, nil)
	u.now = func() time.Time { return now }
	for i := range PasswordAttempts {
		if !u.attempt("f1") {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	if u.attempt("f1") {
		t.Fatal("an attempt past the bound allowed")
	}
	if !u.attempt("f2") {
		t.Fatal("another file's attempt refused")
	}
	now = now.Add(PasswordWindow)
	if !u.attempt("f1") {
		t.Fatal("an attempt after the window refused")
	}
}
