package ingest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
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
		{"no password", fmt.Errorf("extractor pdf: %w", &wasm.Error{Code: unlock.CodeEncrypted, Message: "encrypted PDF needs a password"}), unlock.StatusEncrypted},
		{"wrong password", fmt.Errorf("extractor pdf: %w", &wasm.Error{Code: unlock.CodeWrongPassword, Message: "the password does not open this PDF"}), unlock.StatusEncrypted},
		{"a broken document", fmt.Errorf("extractor pdf: %w", &wasm.Error{Code: "invalid_document", Message: "encrypted: no"}), kindex.StatusFailed},
		{"not a plugin error", errors.New("encrypted"), kindex.StatusFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			reason := encryptedReason("a.pdf", c.err)
			if reason == "" {
				reason = c.err.Error()
			}
			if got := unlock.ShownStatus(kindex.StatusFailed, reason); got != c.want {
				t.Errorf("ShownStatus(failed, %q) = %s, want %s", reason, got, c.want)
			}
			if got := unlock.ShownStatus(kindex.StatusIndexed, reason); got != kindex.StatusIndexed {
				t.Errorf("an indexed content shown as %s", got)
			}
		})
	}
	if err := encryptedError("x"); !errors.Is(err, ErrPermanent) {
		t.Error("an encrypted document is retried")
	}
}
