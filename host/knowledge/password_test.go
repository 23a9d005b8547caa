package knowledge

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/wasm"
)

// TestShownStatus: only a failure for want of a password (or a wrong one)
// is shown as encrypted; the reason comes from the extractor's error code
// (the pdf, office and containers plugins' "encrypted" and
// "wrong_password").
func TestShownStatus(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want kindex.Status
	}{
		{"no password", fmt.Errorf("extractor pdf: %w", &wasm.Error{Code: CodeEncrypted, Message: "encrypted PDF needs a password"}), StatusEncrypted},
		{"wrong password", fmt.Errorf("extractor pdf: %w", &wasm.Error{Code: CodeWrongPassword, Message: "the password does not open this PDF"}), StatusEncrypted},
		{"a broken document", fmt.Errorf("extractor pdf: %w", &wasm.Error{Code: "invalid_document", Message: "encrypted: no"}), kindex.StatusFailed},
		{"not a plugin error", errors.New("encrypted"), kindex.StatusFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			reason := encryptedReason("a.pdf", c.err)
			if reason == "" {
				reason = c.err.Error()
			}
			if got := ShownStatus(kindex.StatusFailed, reason); got != c.want {
				t.Errorf("ShownStatus(failed, %q) = %s, want %s", reason, got, c.want)
			}
			if got := ShownStatus(kindex.StatusIndexed, reason); got != kindex.StatusIndexed {
				t.Errorf("an indexed content shown as %s", got)
			}
		})
	}
	if err := encryptedError("x"); !errors.Is(err, ErrPermanent) {
		t.Error("an encrypted document is retried")
	}
}

// TestPasswordAttempts: PasswordAttempts per file within PasswordWindow,
// counted per file, and attempts older than the window no longer count.
func TestPasswordAttempts(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	u := NewUnlocker(nil, nil)
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
