// Package llm is agenthost's access to language, embedding and audio models.
//
// It speaks the OpenAI HTTP API through github.com/sashabaranov/go-openai, so it
// works against any OpenAI-compatible endpoint (OpenAI, Azure OpenAI's v1 API,
// Ollama, vLLM, llama.cpp, LM Studio, OpenRouter). Each kind of model use (an
// [Operation]) has its own ordered fallback chain of models, each with its
// prices in CHF, so every call can be billed through a [Meter].
//
// # Retries and fallback
//
// A call tries the first model of the operation's chain. On a rate limit (429),
// a request time-out (408), a server error (5xx), a connection error or a
// time-out it retries the same model with exponential backoff and jitter
// (RetryConfig.Attempts attempts in all, honouring Retry-After and
// retry-after-ms up to RetryConfig.MaxRetryAfter; a longer Retry-After moves
// on at once), then moves to the next model of the chain. Any other 4xx is
// the caller's or the configuration's fault: it is returned at once as a
// [*ProviderError] that carries what the provider said, and no other model is
// tried. When every model failed the error wraps [ErrUnavailable] and the last
// provider error. Cancelling the context stops a call at once, including a
// backoff wait.
//
// # Streaming
//
// [Client.Chat] streams when given an onDelta callback. Fallback and retry
// happen only before the first delta reached onDelta: once the caller has
// seen text or tool-call fragments, restarting on another model would hand it
// a second, different beginning. A stream that breaks after that returns the
// part received so far together with an error wrapping [ErrStreamInterrupted];
// the caller decides whether to ask again.
//
// # Billing
//
// Every call that reached a model records one [Usage] per provider request
// through the Meter (an embedding call records one per batch), with the
// tenant, workspace and workflow taken from the context ([WithAttribution]).
// Token counts are the provider's; when a provider reports none (or a stream
// is cut before its usage chunk) they are counted with the tokenizer
// ([CountTokens]) and Usage.Estimated is set. Requests that failed with an
// HTTP error are not recorded: providers do not bill them.
//
// Tests and demos use package llmtest, a scripted server that speaks the same
// wire format.
package llm
