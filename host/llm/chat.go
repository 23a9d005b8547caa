package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// emptyObjectSchema is sent for a tool without parameters: providers reject
// a function whose parameters are null.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

var errTruncatedStream = errors.New("stream ended without a finish_reason (connection cut?)")

// Chat runs one chat completion on req.Operation's chain (OpAgent when
// empty).
//
// With onDelta nil it makes one non-streamed request per attempt. With
// onDelta it streams (stream_options.include_usage) and calls onDelta, on
// the calling goroutine and in order, for every text fragment and tool-call
// fragment (see Delta); tool-call fragments are assembled by index into the
// returned message. Retries and fallback happen only before the first delta
// (see the package doc); after it a broken stream returns the partial
// response and an error wrapping ErrStreamInterrupted.
//
// Models of the chain flagged without function calling are skipped when
// req.Tools is not empty; if that leaves none the error wraps
// ErrNoFunctionCalling. The usage is recorded through the Meter (also for an
// interrupted or cancelled stream, estimated) and returned in the response.
func (c *Client) Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (ChatResponse, error) {
	op := req.Operation
	if op == "" {
		op = modeluse.OpAgent
	}
	if !op.Chat() {
		return ChatResponse{}, fmt.Errorf("llm: %w: operation %q is not a chat operation (use %s or %s)", ErrInvalidRequest, op, modeluse.OpAgent, modeluse.OpSummary)
	}
	if len(req.Messages) == 0 {
		return ChatResponse{}, fmt.Errorf("llm: %s: %w: no messages", op, ErrInvalidRequest)
	}
	chain := c.chain(op)
	if len(chain) == 0 {
		return ChatResponse{}, notConfigured(op)
	}
	chain, err := c.chosen(ctx, op, chain)
	if err != nil {
		return ChatResponse{}, err
	}
	if err := checkImages(ctx, req, chain[0]); err != nil {
		return ChatResponse{}, err
	}
	if len(req.Tools) > 0 {
		var names []string
		chain = slices.DeleteFunc(slices.Clone(chain), func(m *model) bool {
			if m.NoFunctionCalling {
				names = append(names, m.String())
			}
			return m.NoFunctionCalling
		})
		if len(chain) == 0 {
			return ChatResponse{}, fmt.Errorf("llm: %s: %w (%s): describe the tools in the prompt instead (text protocol)",
				op, ErrNoFunctionCalling, strings.Join(names, ", "))
		}
	}

	names, err := newWireNames(req.Tools)
	if err != nil {
		return ChatResponse{}, err
	}
	// The tools' names as the provider takes them (and back, below).
	wreq, onDelta := names.outgoing(req), names.deltas(onDelta)

	h, err := c.hold(ctx, op, estimate(chain, estimatePromptTokens(req), estimateOutputTokens(req, chain)))
	if err != nil {
		return ChatResponse{}, err
	}
	defer h.Release(ctx)
	start := time.Now()
	var (
		resp     ChatResponse
		reported *openai.Usage // the provider's figures, if any
		partial  *assembler    // the attempt that delivered deltas, if one did
	)
	used, tries, err := c.runTraced(ctx, op, chain, func(a *attempt, m *model) (bool, error) {
		oreq := chatRequest(m, wreq)
		if onDelta == nil {
			r, err := m.p.api.CreateChatCompletion(a.ctx, oreq)
			if err != nil {
				return false, err
			}
			if len(r.Choices) == 0 {
				return false, errors.New("the response has no choices")
			}
			ch := r.Choices[0]
			resp = ChatResponse{Message: fromOpenAIMessage(ch.Message), FinishReason: string(ch.FinishReason)}
			reported = &r.Usage
			return false, nil
		}
		oreq.Stream = true
		oreq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
		stream, err := m.p.api.CreateChatCompletionStream(a.ctx, oreq)
		if err != nil {
			return false, err
		}
		defer stream.Close()
		asm := &assembler{onDelta: onDelta}
		partial = asm
		var usage *openai.Usage
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return asm.delivered, err
			}
			a.touch()
			if chunk.Usage != nil {
				usage = chunk.Usage
			}
			for _, ch := range chunk.Choices {
				if ch.Index == 0 {
					asm.add(ch)
				}
			}
		}
		if asm.finish == "" {
			return asm.delivered, errTruncatedStream
		}
		resp = ChatResponse{Message: asm.message(), FinishReason: asm.finish}
		reported = usage
		return asm.delivered, nil
	})

	if err != nil {
		if partial == nil || !partial.delivered || used == nil {
			return ChatResponse{Tries: tries}, err
		}
		// The caller saw part of an answer, and the provider billed it.
		resp = ChatResponse{Message: partial.message(), FinishReason: partial.finish}
		reported = nil
	}
	resp.Message = names.incoming(resp.Message)
	resp.Usage = chatUsage(op, used, req, resp.Message, reported, len(tries), time.Since(start))
	resp.Tries = tries
	if merr := c.record(ctx, h, resp.Usage); merr != nil {
		err = errors.Join(err, merr)
	}
	return resp, err
}

// estimatePromptTokens bounds a request's prompt from its size: a token
// is rarely shorter than three bytes, and counting with the tokenizer before
// every call would cost as much as the check is worth.
func estimatePromptTokens(req ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content) + len(m.Name) + 3*tokensPerMessage + 3*imageTokens*len(m.Images)
		for _, tc := range m.ToolCalls {
			n += len(tc.Name) + len(tc.Arguments) + 3*tokensPerToolCall
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	return n/3 + 1
}

// estimateOutputTokens is the most a request may be answered with: its
// MaxTokens, else what a tool's completion may ask at most
// (DefaultMaxOutputTokens), within the smallest context window of the chain.
func estimateOutputTokens(req ChatRequest, chain []*model) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	out := DefaultMaxOutputTokens
	for _, m := range chain {
		if m.ContextWindow > 0 {
			out = min(out, max(1, m.ContextWindow/4))
		}
	}
	return out
}

// chatUsage prices a chat call, from the provider's figures when it gave
// any and from the tokenizer otherwise.
func chatUsage(op modeluse.Operation, m *model, req ChatRequest, msg Message, reported *openai.Usage, attempts int, d time.Duration) modeluse.Usage {
	u := modeluse.Usage{Operation: op, Provider: m.p.Name, Model: m.Model, Duration: d, Attempts: attempts}
	if reported != nil && reported.PromptTokens+reported.CompletionTokens > 0 {
		u.PromptTokens, u.CompletionTokens = reported.PromptTokens, reported.CompletionTokens
		if d := reported.PromptTokensDetails; d != nil {
			u.CachedPromptTokens = min(d.CachedTokens, u.PromptTokens)
		}
	} else {
		u.Estimated = true
		u.PromptTokens = CountMessageTokens(m.Model, req.Messages, req.Tools)
		u.CompletionTokens = CountTokens(m.Model, msg.Content)
		for _, tc := range msg.ToolCalls {
			u.CompletionTokens += tokensPerToolCall + CountTokens(m.Model, tc.Name) + CountTokens(m.Model, tc.Arguments)
		}
	}
	u.Cost = m.tokenCost(u.PromptTokens, u.CachedPromptTokens, u.CompletionTokens)
	return u
}

// reasoningFamily reports models that take max_completion_tokens instead of
// max_tokens (go-openai refuses max_tokens for them before sending).
func reasoningFamily(name string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// chatRequest translates req for model m.
func chatRequest(m *model, req ChatRequest) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{Model: m.Model}
	for _, msg := range req.Messages {
		om := openai.ChatCompletionMessage{Role: msg.Role, Content: msg.Content, Name: msg.Name, ToolCallID: msg.ToolCallID}
		if len(msg.Images) > 0 {
			// OpenAI's wire format for vision: content becomes an array of
			// parts, the text first, each image a data: URL.
			om.Content = ""
			if msg.Content != "" {
				om.MultiContent = append(om.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: msg.Content})
			}
			for _, im := range msg.Images {
				om.MultiContent = append(om.MultiContent, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeImageURL,
					ImageURL: &openai.ChatMessageImageURL{URL: dataURL(im), Detail: openai.ImageURLDetail(im.Detail)}})
			}
		}
		if msg.Role == RoleTool && msg.Content == "" {
			// go-openai omits empty content, and providers reject a tool
			// message without it.
			om.Content = "(no output)"
		}
		for _, tc := range msg.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{
				ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
			})
		}
		out.Messages = append(out.Messages, om)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = emptyObjectSchema
		}
		out.Tools = append(out.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	if req.MaxTokens > 0 {
		if reasoningFamily(m.Model) {
			out.MaxCompletionTokens = req.MaxTokens
		} else {
			//lint:ignore SA1019 OpenAI-compatible servers (Ollama, vLLM, llama.cpp) read max_tokens, not max_completion_tokens
			out.MaxTokens = req.MaxTokens
		}
	}
	if req.Temperature != nil {
		out.Temperature = *req.Temperature
		if out.Temperature == 0 {
			// go-openai drops a zero temperature (omitempty), which leaves
			// the provider's default of 1; the smallest float32 is 0 to any
			// sampler and survives.
			out.Temperature = math.SmallestNonzeroFloat32
		}
	}
	return out
}

// dataURL is an image as a data: URL.
func dataURL(im ImageInput) string {
	return "data:" + im.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// imageTokens is what one image input is counted as before the provider
// says: OpenAI bills a 1024x1024 image at high detail 765 tokens (85 base
// plus 170 per 512-pixel tile, four tiles); a page scan is of that order.
const imageTokens = 765

// fromOpenAIMessage converts a non-streamed reply.
func fromOpenAIMessage(om openai.ChatCompletionMessage) Message {
	msg := Message{Role: RoleAssistant, Content: om.Content}
	if msg.Content == "" && om.Refusal != "" {
		msg.Content = om.Refusal
	}
	for i, tc := range om.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: callID(tc.ID, i), Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return msg
}

// callID gives a call without an ID (some local servers) a stable one, so
// the tool result can still refer to it.
func callID(id string, index int) string {
	if id != "" {
		return id
	}
	return "call_" + strconv.Itoa(index)
}

// assembler builds a message from stream chunks and forwards fragments.
type assembler struct {
	onDelta   func(Delta)
	content   strings.Builder
	calls     []*streamCall // in index order of first appearance
	finish    string
	delivered bool
}

type streamCall struct {
	index    int
	id, name string
	args     strings.Builder
}

func (s *assembler) emit(d Delta) {
	s.delivered = true
	s.onDelta(d)
}

func (s *assembler) add(ch openai.ChatCompletionStreamChoice) {
	if ch.Delta.Content != "" {
		s.content.WriteString(ch.Delta.Content)
		s.emit(Delta{Content: ch.Delta.Content})
	}
	for _, tc := range ch.Delta.ToolCalls {
		call := s.call(tc)
		d := Delta{ToolCallIndex: call.index}
		if tc.ID != "" && call.id == "" {
			call.id, d.ToolCallID = tc.ID, tc.ID
		}
		// OpenAI sends the name once; some servers repeat it in every chunk.
		if n := tc.Function.Name; n != "" && n != call.name {
			call.name += n
			d.ToolCallName = n
		}
		if tc.Function.Arguments != "" {
			call.args.WriteString(tc.Function.Arguments)
			d.ToolCallArguments = tc.Function.Arguments
		}
		if d.IsToolCall() {
			s.emit(d)
		}
	}
	if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
		s.finish = string(ch.FinishReason)
	}
}

// call finds the call a fragment belongs to: by index when the provider
// gives one (OpenAI always does), else a new call for a new ID and the last
// call otherwise.
func (s *assembler) call(tc openai.ToolCall) *streamCall {
	idx := -1
	if tc.Index != nil {
		idx = *tc.Index
	} else if tc.ID != "" && !slices.ContainsFunc(s.calls, func(c *streamCall) bool { return c.id == tc.ID }) {
		idx = len(s.calls)
	} else if len(s.calls) > 0 {
		idx = s.calls[len(s.calls)-1].index
	} else {
		idx = 0
	}
	for _, c := range s.calls {
		if c.index == idx {
			return c
		}
	}
	c := &streamCall{index: idx}
	s.calls = append(s.calls, c)
	return c
}

func (s *assembler) message() Message {
	msg := Message{Role: RoleAssistant, Content: s.content.String()}
	calls := slices.Clone(s.calls)
	slices.SortStableFunc(calls, func(a, b *streamCall) int { return a.index - b.index })
	for i, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: callID(c.id, i), Name: c.name, Arguments: c.args.String()})
	}
	return msg
}
