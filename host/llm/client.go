package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// Client calls the configured models. It is safe for concurrent use; one
// Client per process is enough (it keeps a connection pool per provider).
type Client struct {
	cfg     Config
	meter   Meter
	admit   Admitter
	reserve Reserver
	log     *slog.Logger
	chains  map[modeluse.Operation][]*model
}

// provider is one configured endpoint with its go-openai client.
type provider struct {
	ProviderConfig
	api *openai.Client
}

// model is one chain entry bound to its provider.
type model struct {
	ModelConfig
	p *provider
}

func (m *model) String() string { return m.p.Name + "/" + m.Model }

func (m *model) info() ModelInfo {
	return ModelInfo{
		Provider: m.p.Name, Name: m.Model, ContextWindow: m.ContextWindow,
		FunctionCalling: !m.NoFunctionCalling, Images: m.Images,
		InputCHFPer1M: m.InputCHFPer1M, OutputCHFPer1M: m.OutputCHFPer1M,
		CHFPerMinute: m.CHFPerMinute, CHFPer1MChars: m.CHFPer1MChars, CHFPerImage: m.CHFPerImage,
		Dimensions: m.Dimensions,
	}
}

// New builds a Client from cfg (defaults applied, then validated; see
// Config.Validate). meter may be nil (nothing is recorded); a meter that is
// also a Reserver holds each call's estimate before it starts (each embedding
// batch), one that is only an Admitter is asked instead; logger may be nil
// (nothing is logged). It makes no network calls: a wrong key or URL shows at
// the first call. Operations without a chain are allowed; calling them
// returns an error wrapping ErrNotConfigured.
func New(cfg Config, meter Meter, logger *slog.Logger) (*Client, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("llm: configuration: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{cfg: cfg, meter: meter, log: logger, chains: map[modeluse.Operation][]*model{}}
	c.admit, _ = meter.(Admitter)
	c.reserve, _ = meter.(Reserver)
	providers := map[string]*provider{}
	for _, pc := range cfg.Providers {
		// One pool per provider; the default two idle connections per host
		// would make a busy host reconnect for most calls.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		oc := openai.DefaultConfig(pc.APIKey)
		oc.BaseURL = strings.TrimRight(pc.BaseURL, "/")
		oc.HTTPClient = &recordingDoer{hc: &http.Client{Transport: tr}}
		providers[pc.Name] = &provider{ProviderConfig: pc, api: openai.NewClientWithConfig(oc)}
	}
	for op, chain := range cfg.Models {
		for _, mc := range chain {
			m := &model{ModelConfig: mc, p: providers[mc.Provider]}
			if !mc.Free && !mc.priced() {
				logger.Warn("llm: model has no price; its calls are recorded at 0 CHF (set prices or free: true)",
					"operation", op, "model", m.String())
			}
			c.chains[op] = append(c.chains[op], m)
		}
	}
	return c, nil
}

// chain returns the models for op. OpSummary without a chain of its own uses
// OpAgent's, so a one-model setup can summarise; OpTitle uses OpSummary's.
func (c *Client) chain(op modeluse.Operation) []*model {
	if ch := c.chains[op]; len(ch) > 0 {
		return ch
	}
	switch op {
	case modeluse.OpTitle:
		return c.chain(modeluse.OpSummary)
	case modeluse.OpSummary:
		return c.chains[modeluse.OpAgent]
	}
	return nil
}

// Model returns the first model of op's chain (the one normally used);
// false when none is configured. OpSummary falls back to OpAgent's chain,
// OpTitle to OpSummary's.
func (c *Client) Model(op modeluse.Operation) (ModelInfo, bool) {
	ch := c.chain(op)
	if len(ch) == 0 {
		return ModelInfo{}, false
	}
	return ch[0].info(), true
}

// Chain returns every model of op's chain in fallback order.
func (c *Client) Chain(op modeluse.Operation) []ModelInfo {
	var out []ModelInfo
	for _, m := range c.chain(op) {
		out = append(out, m.info())
	}
	return out
}

// Configured reports whether op has at least one model (OpSummary: or
// OpAgent has; OpTitle: or OpSummary has). Without one, calls of op fail with ErrNotConfigured and the
// rest of agenthost keeps working.
func (c *Client) Configured(op modeluse.Operation) bool { return len(c.chain(op)) > 0 }

// Config returns the effective configuration (defaults applied). Keys are
// included: do not log it whole (ProviderConfig redacts itself for slog).
func (c *Client) Config() Config { return c.cfg }

// recordingDoer is the HTTP client go-openai calls. go-openai drops the
// response headers of failed requests, so the doer notes the status and
// headers (Retry-After, x-request-id) into the attempt's record, found
// through the request context.
type recordingDoer struct{ hc *http.Client }

func (d *recordingDoer) Do(req *http.Request) (*http.Response, error) {
	t := trafficFrom(req.Context())
	if t != nil {
		t.countRequest(req)
	}
	resp, err := d.hc.Do(req)
	if t != nil && err == nil {
		t.countResponse(resp)
	}
	if rec, ok := req.Context().Value(attemptKey{}).(*attemptRecord); ok {
		rec.sent = true
		if resp != nil {
			rec.status = resp.StatusCode
			rec.header = resp.Header
		}
	}
	return resp, err
}

type attemptKey struct{}

// attemptRecord is what the doer saw of one attempt. It is written and read
// on the calling goroutine only (go-openai calls Do synchronously).
type attemptRecord struct {
	sent   bool
	status int
	header http.Header
}

// attempt is one try of one model: its context carries the record and is
// cancelled when the provider's timeout passes without touch.
type attempt struct {
	ctx     context.Context
	rec     *attemptRecord
	timer   *time.Timer
	timeout time.Duration
}

// touch restarts the time-out; streams call it per chunk so that a long
// answer is not cut while a silent one is.
func (a *attempt) touch() { a.timer.Reset(a.timeout) }

// tryFunc runs one attempt. delivered reports whether output already
// reached the caller, which forbids retrying (see package doc).
type tryFunc func(a *attempt, m *model) (delivered bool, err error)

var errAttemptTimeout = errors.New("attempt timed out")

// run tries chain in order with retries and backoff, as the package doc
// describes. It returns the model that answered and the number of HTTP
// attempts made.
func (c *Client) run(ctx context.Context, op modeluse.Operation, chain []*model, try tryFunc) (*model, int, error) {
	m, tries, err := c.runTraced(ctx, op, chain, try)
	return m, len(tries), err
}

// runTraced is run returning every attempt made, in order.
func (c *Client) runTraced(ctx context.Context, op modeluse.Operation, chain []*model, try tryFunc) (*model, []Try, error) {
	attempts := 0
	var tries []Try
	var last *ProviderError
	var tried []string
	for mi, m := range chain {
		n := 0
		for n < c.cfg.Retry.Attempts {
			n++
			attempts++
			rec := &attemptRecord{}
			actx, cancel := context.WithCancelCause(context.WithValue(ctx, attemptKey{}, rec))
			a := &attempt{ctx: actx, rec: rec, timeout: m.p.Timeout}
			a.timer = time.AfterFunc(m.p.Timeout, func() { cancel(errAttemptTimeout) })
			began := time.Now()
			delivered, err := try(a, m)
			timedOut := errors.Is(context.Cause(actx), errAttemptTimeout)
			tries = append(tries, Try{Provider: m.p.Name, Model: m.Model, Status: rec.status, Duration: time.Since(began)})
			a.timer.Stop()
			cancel(nil)
			if err == nil {
				if mi > 0 || n > 1 {
					c.log.Info("llm: call succeeded after retry or fallback", "operation", op, "model", m.String(), "attempts", attempts)
				}
				return m, tries, nil
			}
			if ctx.Err() != nil {
				return m, tries, stopped(op, ctx)
			}
			pe := classify(m, rec, err, timedOut)
			last = pe
			tr := &tries[len(tries)-1]
			tr.Status, tr.Kind, tr.Error = pe.StatusCode, pe.Kind, pe.Error()
			if delivered {
				return m, tries, fmt.Errorf("llm: %s: %w: %w", op, ErrStreamInterrupted, pe)
			}
			if !pe.retryable {
				return m, tries, pe
			}
			if n >= c.cfg.Retry.Attempts {
				break
			}
			wait := c.backoff(n)
			if pe.RetryAfter > 0 {
				if pe.RetryAfter > c.cfg.Retry.MaxRetryAfter {
					c.log.Warn("llm: provider asks to wait longer than allowed; next model", "operation", op,
						"model", m.String(), "retryAfter", pe.RetryAfter, "max", c.cfg.Retry.MaxRetryAfter)
					break
				}
				wait = max(wait, pe.RetryAfter)
			}
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
				break // waiting would outlive the caller; another model may answer now
			}
			c.log.Warn("llm: retrying", "operation", op, "model", m.String(), "attempt", n, "wait", wait, "err", pe)
			tries[len(tries)-1].Wait = wait
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return m, tries, stopped(op, ctx)
			case <-t.C:
			}
		}
		tried = append(tried, fmt.Sprintf("%s ×%d", m, n))
		if mi+1 < len(chain) {
			c.log.Warn("llm: falling back to the next model", "operation", op, "from", m.String(),
				"to", chain[mi+1].String(), "err", last)
		}
	}
	return nil, tries, fmt.Errorf("llm: %s: %w (tried %s): %w", op, ErrUnavailable, strings.Join(tried, ", "), last)
}

// stopped is the error of a call whose context ended.
func stopped(op modeluse.Operation, ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return fmt.Errorf("llm: %s call stopped: %w (%w)", op, ctx.Err(), cause)
	}
	return fmt.Errorf("llm: %s call stopped: %w", op, ctx.Err())
}

// backoff is the wait before retry n (1-based): BaseDelay doubling up to
// MaxDelay, jittered over its upper half so that many clients hit by the same
// rate limit do not return in step.
func (c *Client) backoff(n int) time.Duration {
	r := c.cfg.Retry
	d := r.BaseDelay
	for i := 1; i < n && d < r.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, r.MaxDelay)
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d/2+1)
}

// classify turns an attempt's error into a ProviderError and decides whether
// it is worth retrying.
func classify(m *model, rec *attemptRecord, err error, timedOut bool) *ProviderError {
	pe := &ProviderError{Provider: m.p.Name, Model: m.Model, Err: err, StatusCode: rec.status}
	if rec.header != nil {
		pe.RetryAfter = retryAfter(rec.header, time.Now())
		pe.RequestID = rec.header.Get("x-request-id")
	}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		pe.Type, pe.Message = apiErr.Type, apiErr.Message
		if apiErr.Code != nil {
			pe.Code = fmt.Sprint(apiErr.Code)
		}
		if apiErr.Param != nil {
			pe.Param = *apiErr.Param
		}
		if pe.StatusCode == 0 {
			pe.StatusCode = apiErr.HTTPStatusCode
		}
	case errors.As(err, &reqErr):
		pe.Message = strings.TrimSpace(string(reqErr.Body))
		if len(pe.Message) > 500 {
			pe.Message = pe.Message[:500] + "…"
		}
		if pe.StatusCode == 0 {
			pe.StatusCode = reqErr.HTTPStatusCode
		}
	}
	switch s := pe.StatusCode; {
	case timedOut:
		pe.Err = fmt.Errorf("%w after %s: %w", ErrTimeout, m.p.Timeout, err)
		pe.retryable, pe.Kind = true, KindTimeout
	case s == http.StatusTooManyRequests:
		pe.retryable, pe.Kind = true, KindRateLimit
	case s == http.StatusRequestTimeout:
		pe.retryable, pe.Kind = true, KindTimeout
	case s >= 500:
		// 529 is Anthropic's "overloaded".
		pe.retryable, pe.Kind = true, KindServer
	case s >= 200 && s < 300:
		// The provider accepted the request and then sent something broken
		// (bad JSON, a cut stream, an error event): its fault, try again.
		pe.retryable, pe.Kind = true, KindServer
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		pe.Kind = KindAuth
	case s != 0:
		// Other 4xx: the request or the configuration is wrong; retrying
		// the same request cannot help.
		pe.Kind = KindInvalidRequest
		if w, ok := contextOverflow(pe); ok {
			pe.Kind, pe.ContextWindow = KindContextLength, w
		}
	case rec.sent:
		pe.retryable, pe.Kind = true, KindTransport // no response: connection refused, reset, DNS
	default:
		// go-openai refused the request before sending it (its checks of
		// model-specific parameters): retrying cannot help.
		pe.Kind = KindInvalidRequest
	}
	return pe
}

// contextWindowIn finds the window in the providers' context-length
// messages: OpenAI's and Azure's "maximum context length is 8192 tokens",
// Anthropic's "prompt is too long: 9000 tokens > 8192 maximum".
var contextWindowIn = regexp.MustCompile(`(?i)maximum context length is (\d+)|tokens > (\d+) maximum`)

// contextOverflow reports a refusal for the context window: OpenAI's and
// Azure's code context_length_exceeded, or a message that says so (local
// servers and Anthropic give no code), and the window named, if any.
func contextOverflow(pe *ProviderError) (int, bool) {
	msg := strings.ToLower(pe.Message)
	if pe.Code != "context_length_exceeded" && !strings.Contains(msg, "maximum context length") &&
		!strings.Contains(msg, "prompt is too long") && !strings.Contains(msg, "context window") &&
		!strings.Contains(msg, "context length") {
		return 0, false
	}
	window := 0
	if m := contextWindowIn.FindStringSubmatch(pe.Message); m != nil {
		for _, g := range m[1:] {
			if n, err := strconv.Atoi(g); err == nil && n > 0 {
				window = n
			}
		}
	}
	return window, true
}

// retryAfter reads retry-after-ms (OpenAI, Azure) or Retry-After (seconds
// or an HTTP date).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// hold admits a call before anything is sent: a Reserver holds its
// estimate against the tenant's limits, an Admitter only checks them. The
// hold records the call's usage (record) or, deferred, gives the estimate
// back when the call failed before any usage.
func (c *Client) hold(ctx context.Context, op modeluse.Operation, estimate money.Amount) (Hold, error) {
	switch {
	case c.reserve != nil:
		h, err := c.reserve.Reserve(ctx, op, estimate)
		if err != nil {
			return nil, fmt.Errorf("llm: %s: %w: %w", op, ErrRefused, err)
		}
		return h, nil
	case c.admit != nil:
		if err := c.admit.Admit(ctx, op); err != nil {
			return nil, fmt.Errorf("llm: %s: %w: %w", op, ErrRefused, err)
		}
	}
	return meterHold{c.meter}, nil
}

// meterHold is the hold of a meter that holds nothing: Settle records.
type meterHold struct{ m Meter }

func (h meterHold) Settle(ctx context.Context, u modeluse.Usage) error {
	if h.m == nil {
		return nil
	}
	return h.m.Record(ctx, u)
}

func (meterHold) Release(context.Context) {}

// estimate is the most a call's chain may charge: the dearest model's
// price of prompt input tokens and output completion tokens.
func estimate(chain []*model, prompt, output int) money.Amount {
	var most money.Amount
	for _, m := range chain {
		most = max(most, m.tokenCost(prompt, 0, output))
	}
	return most
}

// record hands u to the meter through the call's hold. The context keeps
// its values (attribution) but not its cancellation: a stopped call still
// pays for what it used.
func (c *Client) record(ctx context.Context, h Hold, u modeluse.Usage) error {
	c.log.Debug("llm: usage", "operation", u.Operation, "model", u.Provider+"/"+u.Model,
		"promptTokens", u.PromptTokens, "completionTokens", u.CompletionTokens,
		"costCHF", u.Cost, "estimated", u.Estimated, "duration", u.Duration)
	if err := h.Settle(context.WithoutCancel(ctx), u); err != nil {
		return fmt.Errorf("llm: %s: %w: %w", u.Operation, ErrMeter, err)
	}
	return nil
}

// tokenCost prices tokens at CHF per million, cached prompt tokens (part of
// prompt) at the cached-input price. The configuration's float prices are
// read as exact nano-franc amounts, and the cost is rounded once per call.
func (m *model) tokenCost(prompt, cached, completion int) money.Amount {
	in := money.FromCHF(m.InputCHFPer1M)
	cachedIn := in
	if m.CachedInputCHFPer1M != 0 {
		cachedIn = money.FromCHF(m.CachedInputCHFPer1M)
	}
	return money.PerMillion(int64(prompt-cached), in) + money.PerMillion(int64(cached), cachedIn) +
		money.PerMillion(int64(completion), money.FromCHF(m.OutputCHFPer1M))
}

// audioCost prices transcribed audio at CHF per minute.
func (m *model) audioCost(seconds float64) money.Amount {
	return money.Amount(math.Round(seconds * float64(money.FromCHF(m.CHFPerMinute)) / 60))
}
