// Package agent runs the agent loop (docs/agent.md): a ReAct loop with native
// OpenAI-style function calling (or, for models without it, a JSON
// selection / parameters / observation text protocol), read-only tools of a
// round in parallel and writing tools in order, tool errors and hallucinated
// tools returned to the model, external errors retried, a round budget and a
// cost budget that end in a progress summary rather than a silent stop, and
// progressive summarisation of older rounds.
//
// The loop knows nothing of HTTP or storage: it gets a model, a tool set and
// a sink for its events, and returns what happened. Stopping is cancelling
// the context.
package agent

import (
	"context"
	"log/slog"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/wasm"
)

// Config is a workspace's agent configuration plus the loop's limits. Zero
// values take the defaults in brackets.
type Config struct {
	// MaxRounds bounds the model calls of one run [25].
	MaxRounds int
	// MaxCost is the workflow's budget; 0 means none. Cost spent before
	// this run (Input.Spent) counts.
	MaxCost money.Amount
	// Operation selects the model chain [llm.OpAgent].
	Operation modeluse.Operation
	// SystemPrompt opens every conversation [a short default].
	SystemPrompt string
	// ToolParallelism bounds read-only tools running at once [4].
	ToolParallelism int
	// ToolAttempts is how often a tool that failed for an external reason
	// (time-out, HTTP failure, plugin unavailable) is tried [3].
	ToolAttempts int
	// RetryBase is the first back-off between tool attempts, doubling [200ms].
	RetryBase time.Duration
	// KeepRounds is how many recent rounds stay verbatim when older ones are
	// summarised [3].
	KeepRounds int
	// SummarizeAt is the share of the model's context window a prompt may
	// fill before older rounds are summarised [0.6].
	SummarizeAt float64
	// TextProtocol forces (true) or forbids (false) the text protocol; nil
	// decides by the model's FunctionCalling flag.
	TextProtocol *bool
	// ContextShare is the most of the model's context window a
	// ContextSource's message may take [0.4]; it gets less when the
	// conversation leaves less (see ContextRequest.Budget).
	ContextShare float64
	// ResultShare is the most of the room the model's window leaves in a
	// round (window minus prompt minus the reply's reserve) that the
	// round's tool results may take together [0.5]; a result over its
	// share is kept as a document and the model gets its head (fit.go).
	ResultShare float64
	// ResultHeadTokens bounds the head of a result over its share [2000].
	ResultHeadTokens int
	// Results keeps tool results too large for the model's context as
	// documents of the run's workflow (it acts for the tool call's caller
	// in the context) [none: such a result reaches the model as a head].
	Results ResultKeeper
	// Gate decides per tool whether a call runs, waits for a person or is
	// refused (approval.go) [none: every call runs].
	Gate Gate
	// Observer is told of runs, rounds, model and tool calls (telemetry)
	// [none].
	Observer Observer
}

func (c Config) withDefaults() Config {
	if c.MaxRounds <= 0 {
		c.MaxRounds = 25
	}
	if c.Operation == "" {
		c.Operation = modeluse.OpAgent
	}
	if c.SystemPrompt == "" {
		c.SystemPrompt = defaultSystemPrompt
	}
	if c.ToolParallelism <= 0 {
		c.ToolParallelism = 4
	}
	if c.ToolAttempts <= 0 {
		c.ToolAttempts = 3
	}
	if c.RetryBase <= 0 {
		c.RetryBase = 200 * time.Millisecond
	}
	if c.KeepRounds <= 0 {
		c.KeepRounds = 3
	}
	if c.SummarizeAt <= 0 {
		c.SummarizeAt = 0.6
	}
	if c.ContextShare <= 0 || c.ContextShare > 1 {
		c.ContextShare = 0.4
	}
	if c.ResultShare <= 0 || c.ResultShare > 1 {
		c.ResultShare = 0.5
	}
	if c.ResultHeadTokens <= 0 {
		c.ResultHeadTokens = 2000
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	return c
}

const defaultSystemPrompt = "You are the agent of an AI workspace. Use the tools when they help; " +
	"answer in the user's language; when you have the answer, reply without calling tools."

// Model is what the loop needs of the model layer.
type Model interface {
	Chat(ctx context.Context, req llm.ChatRequest, onDelta func(llm.Delta)) (llm.ChatResponse, error)
	Model(op modeluse.Operation) (llm.ModelInfo, bool)
}

// ChoosingModel is a Model that honours a model chosen in the context
// (llm.WithModel): ModelIn returns the model the round's calls start with.
// *llm.Client is one.
type ChoosingModel interface {
	ModelIn(ctx context.Context, op modeluse.Operation) (llm.ModelInfo, bool)
}

// Tools is what the loop needs of a tool set.
type Tools interface {
	Tools() []tools.Tool
	Lookup(name string) (tools.Tool, bool)
	Call(ctx context.Context, name string, args []byte, opts *wasm.CallOptions) wasm.Result
}

// Agent runs agent loops. It is safe for concurrent use: each Run has its
// own state.
type Agent struct {
	model  Model
	cfg    Config
	logger *slog.Logger
	counts *countCache // message token counts, shared by the runs
}

// New returns an agent over a model; logger nil discards logs.
func New(model Model, cfg Config, logger *slog.Logger) *Agent {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Agent{model: model, cfg: cfg.withDefaults(), logger: logger, counts: newCountCache(countCacheEntries)}
}

// Input is one run: a user's prompt in a workflow that may have history.
type Input struct {
	Prompt string
	// History is the conversation of earlier workflow rounds (user prompts
	// and final answers), oldest first.
	History []llm.Message
	// Summary is the running summary of what History no longer holds.
	Summary string
	// Context is extra context for this run (retrieved knowledge), placed
	// before the prompt; empty for none.
	Context string
	// ContextSource, when set, supplies the context message of every model
	// round (retrieved knowledge, the workflow's memory and the running
	// summary, fitted to the room the conversation leaves); the loop then
	// leaves the summary to it rather than sending its own message.
	ContextSource ContextSource
	// Spent is what the workflow has cost before this run. The run
	// carries its tally on in the context of everything it calls
	// (llm.WithRunCost); tools whose model calls add to it count toward
	// the budget at once.
	Spent money.Amount
	// MaxCost, when positive, is this run's own budget (a background
	// job's); the lower of it and Config.MaxCost applies.
	MaxCost money.Amount
	// Instructions are the custom instructions of the person the run
	// works for (their preferences): sent after the system prompt as a
	// system message of their own, delimited, so that they add to the
	// host's instructions and never replace them. Empty: none.
	Instructions string
	// Round is the workflow round this run serves (for events).
	Round int
	// Gate, when set, is this run's approval gate in place of Config.Gate
	// (the workspace's policies).
	Gate Gate
	// Resume, when set, continues a run paused for approval
	// (Result.Paused) with the decisions on its calls; Prompt, History
	// and Context are then ignored (the checkpoint holds the conversation).
	Resume *Resume
	// Continues is the W3C traceparent of the trace this run continues: a
	// round taken over from a host that stopped (its spans link to it).
	Continues string
}

// Outcome is how a run ended.
type Outcome string

// The outcomes of a run.
const (
	Completed      Outcome = "completed"
	MaxRounds      Outcome = "maxRoundsReached"
	BudgetExceeded Outcome = "budgetExceeded"
	Stopped        Outcome = "stopped"
	Failed         Outcome = "failed"
)

// Result is what a run did.
type Result struct {
	Outcome Outcome
	// Answer is the final answer, or the progress summary when the run ended
	// on a limit or a stop.
	Answer    string
	Rounds    int
	ToolCalls int
	// Cost is what the loop's own model calls cost (the workflow's
	// statistics receive it when the run ends, the events carry it); the
	// model calls of its tools are recorded as they happen and are not in it.
	Cost money.Amount
	// Spent is the workflow's spending when the run ended, the figure its
	// budget was judged by: Input.Spent, Cost and the tools' model calls.
	Spent            money.Amount
	PromptTokens     int
	CompletionTokens int
	// Model is the model that answered the run's last model call (another
	// than the configured first when the fallback chain took over).
	Model string
	// Summary is the updated running summary of older conversation; the
	// caller keeps it with the workflow.
	Summary string
	// Paused is the checkpoint of a run that waits for approval
	// (Outcome WaitingForApproval); the caller keeps it and resumes the
	// run with Input.Resume.
	Paused *Checkpoint
	// Err says why a failed run failed.
	Err error
	// Duration is the run's wall time.
	Duration time.Duration
}

// ContextSource supplies the context of each model round (in agenthost the
// knowledge store's context builder). The agent knows nothing of where it
// comes from.
type ContextSource interface {
	// RoundContext is called before every model round of a run. Its text
	// goes to the model as a system message after the system prompt, in
	// place of the previous round's; its usage (a model call it made, e.g.
	// entity extraction) counts toward the run's cost and budget. An error
	// is logged and the round goes on without context.
	RoundContext(ctx context.Context, req ContextRequest) (RoundContext, error)
}

// ContextRequest is what a ContextSource learns of the round.
type ContextRequest struct {
	// Round is the loop round of this run, from 1.
	Round int
	// Model names the model (and so its tokenizer).
	Model string
	// Budget is the tokens the context may take: ContextShare of the
	// model's window, or less when the conversation, tool definitions and
	// the reply's reserve leave less.
	Budget int
	// Summary is the running summary of older conversation as the loop
	// holds it now.
	Summary string
}

// RoundContext is a source's answer.
type RoundContext struct {
	Text  string
	Usage modeluse.Usage
}
