package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/llm"
)

func TestModelFailureWording(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&llm.ProviderError{Provider: "openai", Model: "m", StatusCode: 500, Kind: llm.KindServer, Message: "boom"}, "answered with an error"},
		{&llm.ProviderError{Provider: "openai", Model: "m", Kind: llm.KindTransport, Err: errors.New("connection refused")}, "could not be reached"},
		{&llm.ProviderError{Provider: "openai", Model: "m", Kind: llm.KindTimeout, Err: errors.New("deadline")}, "could not be reached"},
		{&llm.ProviderError{Provider: "openai", Model: "m", StatusCode: 401, Kind: llm.KindAuth}, "refused the credentials"},
		{&llm.ProviderError{Provider: "openai", Model: "m", StatusCode: 429, Kind: llm.KindRateLimit}, "limiting requests"},
		{fmt.Errorf("agent: %w", &llm.ProviderError{Provider: "openai", Model: "m", StatusCode: 400, Kind: llm.KindInvalidRequest}), "refused the request"},
		{errors.New("something else"), "The model failed"},
	}
	for _, c := range cases {
		if got := modelFailure(c.err); !strings.Contains(got, c.want) || !strings.Contains(got, c.err.Error()) {
			t.Errorf("%v: %q, want %q and the error", c.err, got, c.want)
		}
	}
}
