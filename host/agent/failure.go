package agent

import (
	"errors"

	"github.com/agenthost/agenthost/host/llm"
)

// modelFailure words why a round's model call failed by what happened: a
// provider that answered with an error was reached, and saying otherwise
// sends the reader to check the network instead of the provider.
func modelFailure(err error) string {
	var pe *llm.ProviderError
	if !errors.As(err, &pe) {
		return "The model failed: " + err.Error()
	}
	switch pe.Kind {
	case llm.KindTransport, llm.KindTimeout:
		return "The model could not be reached: " + err.Error()
	case llm.KindAuth:
		return "The model's provider refused the credentials: " + err.Error()
	case llm.KindRateLimit:
		return "The model's provider is limiting requests: " + err.Error()
	case llm.KindInvalidRequest, llm.KindContextLength:
		return "The model's provider refused the request: " + err.Error()
	default:
		return "The model's provider answered with an error: " + err.Error()
	}
}
