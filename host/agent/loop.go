package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tools"
	"github.com/agenthost/agenthost/host/workflows"
)

// run is the state of one Run.
type run struct {
	a     *Agent
	cfg   Config
	in    Input
	tools Tools
	sink  Sink
	info  llm.ModelInfo
	text  bool // text protocol instead of function calling

	msgs    []llm.Message // the conversation sent to the model
	rounds  []span        // msgs[span] of each verbatim loop round, oldest first
	summary string
	context string // the ContextSource's text for the current round
	res     Result
	log     []string // one line per tool call, for progress summaries
	tokens  *tokenCount
	// cost is the workflow's spending: before the run, the loop's calls,
	// and the model calls of its tools (which add to it through the
	// context); the budget is judged by it.
	cost *llm.RunCost
	// fitted holds the call ids of tool results the model got as a head
	// (fit.go): they are bounded already.
	fitted map[string]bool
	// decided holds the decisions on the asked calls of a resumed run
	// (approval.go).
	decided map[string]Decision
}

// span is a half-open range of msgs.
type span struct{ from, to int }

// Run runs the loop until the model answers, a limit is reached, the context
// is cancelled (a user's stop) or the model fails on every fallback.
func (a *Agent) Run(ctx context.Context, in Input, ts Tools, sink Sink) Result {
	start := time.Now()
	if sink == nil {
		sink = func(context.Context, Event) {}
	}
	r := &run{a: a, cfg: a.cfg, in: in, tools: ts, sink: sink, summary: in.Summary, cost: llm.NewRunCost(in.Spent),
		fitted: map[string]bool{}}
	if in.Gate != nil {
		r.cfg.Gate = in.Gate
	}
	if in.MaxCost > 0 && (r.cfg.MaxCost <= 0 || in.MaxCost < r.cfg.MaxCost) {
		r.cfg.MaxCost = in.MaxCost
	}
	ctx, endRun := a.cfg.Observer.StartRun(ctx, in)
	// Tools that call models through the model capability add their cost
	// to the run's tally at once, so the next model call sees it.
	ctx = llm.WithRunCost(ctx, r.cost)
	r.info, _ = a.model.Model(a.cfg.Operation)
	if cm, ok := a.model.(ChoosingModel); ok {
		// The conversation's chosen model sizes the context and decides
		// the tool protocol (docs/agent.md, "Model choice").
		r.info, _ = cm.ModelIn(ctx, a.cfg.Operation)
	}
	r.tokens = newTokenCount(r.info.Name, a.counts)
	r.text = !r.info.FunctionCalling
	if a.cfg.TextProtocol != nil {
		r.text = *a.cfg.TextProtocol
	}
	r.res = r.loop(ctx)
	r.res.Summary = r.summary
	r.res.Spent = r.cost.Spent()
	r.res.Duration = time.Since(start)
	endRun(r.res)
	r.emit(ctx, workflows.EventAgentSummary, workflows.AgentSummaryData{Reason: string(r.res.Outcome), Rounds: r.res.Rounds,
		ToolCalls: r.res.ToolCalls, CostCHF: r.res.Cost.String(), Tokens: int64(r.res.PromptTokens + r.res.CompletionTokens),
		DurationMS: r.res.Duration.Milliseconds(), Model: r.res.Model,
		ChosenModel: llm.ChosenModel(ctx)})
	return r.res
}

// round runs one loop round in the run's protocol.
func (r *run) round(ctx context.Context, round int) (string, bool, error) {
	if r.text {
		return r.textRound(ctx, round)
	}
	return r.nativeRound(ctx, round)
}

func (r *run) emit(ctx context.Context, typ workflows.EventType, data any) {
	r.sink(context.WithoutCancel(ctx), Event{Type: typ, Data: data})
}

func (r *run) loop(ctx context.Context) Result {
	first := 1
	if r.in.Resume != nil {
		var err error
		if first, err = r.resumed(ctx, r.in.Resume); err != nil {
			return r.end(BudgetExceeded, r.progressSummary("The tenant's spending limit is reached: "+refusal(err)+"."), err)
		}
	} else {
		r.msgs = r.opening()
	}
	for round := first; round <= r.cfg.MaxRounds; round++ {
		if ctx.Err() != nil {
			return r.end(Stopped, r.progressSummary("Stopped by the user."), nil)
		}
		if r.overBudget() {
			return r.end(BudgetExceeded, r.budgetSummary(), nil)
		}
		rctx, endRound := r.cfg.Observer.StartRound(ctx, round)
		if err := r.compact(rctx); err != nil && ctx.Err() != nil {
			endRound()
			return r.end(Stopped, r.progressSummary("Stopped by the user."), nil)
		}
		r.refreshContext(rctx, round)
		// Summarising and the round's context may have called models too.
		if r.overBudget() {
			endRound()
			return r.end(BudgetExceeded, r.budgetSummary(), nil)
		}
		r.res.Rounds = round
		before := len(r.msgs)
		var answer string
		var done bool
		var err error
		answer, done, err = r.round(rctx, round)
		if errors.Is(err, llm.ErrContextLength) && ctx.Err() == nil {
			// Sending the same request again cannot help: the context is
			// compacted to what the model's window takes, and the round
			// runs once more.
			r.msgs = r.msgs[:before]
			r.shrink(rctx, round, err)
			answer, done, err = r.round(rctx, round)
			if errors.Is(err, llm.ErrContextLength) {
				err = fmt.Errorf("agent: the conversation does not fit the model's context window even compacted: %w", err)
			}
		}
		endRound()
		r.rounds = append(r.rounds, span{before, len(r.msgs)})
		r.emit(ctx, workflows.EventAgentProgress, workflows.AgentProgressData{Round: round, MaxRounds: r.cfg.MaxRounds,
			ToolCalls: r.res.ToolCalls, CostCHF: r.res.Cost.String(), Tokens: int64(r.res.PromptTokens + r.res.CompletionTokens),
			Model: r.res.Model})
		switch {
		case errors.Is(err, errPaused):
			return r.end(WaitingForApproval, "", nil)
		case err != nil && ctx.Err() != nil:
			return r.end(Stopped, r.progressSummary("Stopped by the user."), nil)
		case errors.Is(err, llm.ErrRefused):
			// The tenant's credit or monthly budget is spent: nothing was
			// sent, and no further call (not even a summary) may be made.
			return r.end(BudgetExceeded, r.progressSummary("The tenant's spending limit is reached: "+refusal(err)+"."), err)
		case err != nil:
			return r.end(Failed, r.progressSummary(modelFailure(err)), err)
		case done:
			return r.end(Completed, answer, nil)
		}
	}
	return r.end(MaxRounds, r.finalSummary(ctx), nil)
}

// refusal is the reason a call was refused, without the layers of
// wrapping ("credit exhausted (CHF 10.00 spent of CHF 10.00 credit)").
func refusal(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "billing: "); i >= 0 {
		msg = msg[i+len("billing: "):]
	}
	return msg
}

func (r *run) end(o Outcome, answer string, err error) Result {
	r.res.Outcome, r.res.Answer, r.res.Err = o, answer, err
	return r.res
}

// opening builds the first messages: system prompt, running summary, earlier
// rounds, retrieved context and the prompt.
func (r *run) opening() []llm.Message {
	sys := r.cfg.SystemPrompt
	if r.text {
		sys += "\n\n" + textProtocolRules(r.tools.Tools())
	}
	msgs := []llm.Message{{Role: "system", Content: sys}}
	if r.in.Instructions != "" {
		msgs = append(msgs, llm.Message{Role: "system", Content: PersonInstructions(r.in.Instructions)})
	}
	if r.summary != "" && r.in.ContextSource == nil {
		msgs = append(msgs, llm.Message{Role: "system", Content: "Summary of the conversation so far:\n" + r.summary})
	}
	msgs = append(msgs, r.in.History...)
	prompt := r.in.Prompt
	if r.in.Context != "" {
		prompt = "Context:\n" + r.in.Context + "\n\nRequest:\n" + prompt
	}
	return append(msgs, llm.Message{Role: "user", Content: prompt})
}

// chunkEvery bounds how often streamed text becomes a chunk event: a model
// streams a token at a time, and every event is a database write.
const chunkEvery = 50 * time.Millisecond

// chat calls the model, accounts for the call and, when stream is set,
// streams the content as chunk events, coalesced to one per chunkEvery.
func (r *run) chat(ctx context.Context, req llm.ChatRequest, stream bool) (llm.ChatResponse, error) {
	req.Operation = r.cfg.Operation
	req.Messages = r.withContext(req.Messages)
	var onDelta func(llm.Delta)
	var buf strings.Builder
	var last time.Time
	flush := func() {
		if buf.Len() > 0 {
			r.emit(ctx, workflows.EventChunk, workflows.ChunkData{Text: buf.String()})
			buf.Reset()
		}
		last = time.Now()
	}
	if stream {
		last = time.Now()
		onDelta = func(d llm.Delta) {
			buf.WriteString(d.Content)
			if time.Since(last) >= chunkEvery {
				flush()
			}
		}
	}
	cctx, endCall := r.cfg.Observer.StartModelCall(ctx, req.Operation, r.info.Name)
	resp, err := r.a.model.Chat(cctx, req, onDelta)
	endCall(resp.Usage, resp.Tries, err)
	flush()
	r.account(resp.Usage)
	if resp.Usage.Model != "" {
		r.res.Model = resp.Usage.Model
	}
	return resp, err
}

func (r *run) account(u modeluse.Usage) {
	r.res.Cost += u.Cost
	r.res.PromptTokens += u.PromptTokens
	r.res.CompletionTokens += u.CompletionTokens
	r.cost.Add(u.Cost)
}

// overBudget reports whether the workflow's spending, its tools' model
// calls included, reached the budget.
func (r *run) overBudget() bool {
	return r.cfg.MaxCost > 0 && r.cost.Spent() >= r.cfg.MaxCost
}

// budgetSummary ends a run whose budget is spent.
func (r *run) budgetSummary() string {
	return r.progressSummary(fmt.Sprintf("The cost budget of CHF %.2f is spent (CHF %.4f, the tools' model calls included).",
		r.cfg.MaxCost.CHF(), r.cost.Spent().CHF()))
}

// promptTokens counts the conversation and tool definitions as the model
// will see them (the round's context aside), from the per-message cache.
func (r *run) promptTokens() int {
	return r.tokens.prompt(r.msgs, toolDefs(r.tools.Tools()))
}

// nativeRound is one round with function calling: the model answers or asks
// for tools, whose results go back as tool messages.
func (r *run) nativeRound(ctx context.Context, round int) (string, bool, error) {
	defs := toolDefs(r.tools.Tools())
	resp, err := r.chat(ctx, llm.ChatRequest{Messages: r.msgs, Tools: defs}, true)
	if err != nil {
		return "", false, err
	}
	msg := resp.Message
	msg.Role = "assistant"
	r.msgs = append(r.msgs, msg)
	if len(msg.ToolCalls) == 0 {
		return msg.Content, true, nil
	}
	calls := make([]call, len(msg.ToolCalls))
	for i, tc := range msg.ToolCalls {
		calls[i] = call{id: tc.ID, name: tc.Name, args: tc.Arguments}
	}
	if err := r.gate(ctx, round, calls); err != nil {
		return "", false, err
	}
	outs := r.execute(ctx, round, calls)
	r.appendResults(calls, outs)
	return "", false, refusedCall(calls, outs)
}

// appendResults adds a round's tool results to the conversation.
func (r *run) appendResults(calls []call, outs []outcome) {
	for i, out := range outs {
		r.msgs = append(r.msgs, llm.Message{Role: "tool", ToolCallID: calls[i].id, Name: calls[i].name, Content: out.forModel()})
		if out.fit.over {
			r.fitted[calls[i].id] = true
		}
	}
}

func toolDefs(ts []tools.Tool) []llm.ToolDef {
	defs := make([]llm.ToolDef, len(ts))
	for i, t := range ts {
		desc := t.Description
		if t.Unavailable != "" {
			// Still offered, so that the model knows the tool and why it
			// fails rather than finding it gone.
			desc = "[Unavailable now: " + t.Unavailable + ".] " + desc
		}
		defs[i] = llm.ToolDef{Name: t.Name, Description: desc, Parameters: t.Parameters}
	}
	return defs
}

// progressSummary is the answer of a run that ends early without another
// model call: what was done, from the loop's own records.
func (r *run) progressSummary(why string) string {
	var b strings.Builder
	b.WriteString(why)
	fmt.Fprintf(&b, " Progress after %d round(s), %d tool call(s), CHF %.4f:", r.res.Rounds, r.res.ToolCalls, r.res.Cost.CHF())
	if len(r.log) == 0 {
		b.WriteString(" no tools were called yet.")
	}
	for _, l := range r.log {
		b.WriteString("\n- ")
		b.WriteString(l)
	}
	return b.String()
}

// finalSummary ends a run that reached MaxRounds: one more model call, with
// no tools offered, asks for the progress so far; if the budget or the model
// does not allow it, the loop's own record serves.
func (r *run) finalSummary(ctx context.Context) string {
	why := fmt.Sprintf("The round limit (%d) is reached.", r.cfg.MaxRounds)
	if r.overBudget() || ctx.Err() != nil {
		return r.progressSummary(why)
	}
	msgs := append(append([]llm.Message{}, r.msgs...), llm.Message{Role: "user", Content: "The round limit is reached; no more tools can be called. " +
		"Summarise for the user what has been done and found so far, and what remains open."})
	resp, err := r.chat(ctx, llm.ChatRequest{Messages: msgs}, true)
	if err != nil || strings.TrimSpace(resp.Message.Content) == "" {
		return r.progressSummary(why)
	}
	return why + "\n\n" + resp.Message.Content
}

// replyReserve is the share of the context window kept for the model's
// reply when the context budget is worked out.
const replyReserve = 8

// refreshContext asks the run's ContextSource for this round's context,
// within what the conversation leaves of the window (less a reserve for the
// reply) and at most ContextShare of it.
func (r *run) refreshContext(ctx context.Context, round int) {
	src := r.in.ContextSource
	if src == nil {
		return
	}
	window := r.info.ContextWindow
	if window <= 0 {
		window = defaultWindow
	}
	rest := r.promptTokens() + window/replyReserve
	budget := min(int(r.cfg.ContextShare*float64(window)), window-rest)
	rc, err := src.RoundContext(ctx, ContextRequest{Round: round, Model: r.info.Name, Budget: max(0, budget), Summary: r.summary})
	r.account(rc.Usage)
	if err != nil {
		r.a.logger.Warn("agent: the round's context failed; going on without it", "round", round, "err", err)
		r.context = ""
		return
	}
	r.context = rc.Text
}

// withContext is msgs with the round's context as a system message after
// the system prompt. It is added to each request rather than kept in
// r.msgs, so it is replaced every round and never folded into summaries.
func (r *run) withContext(msgs []llm.Message) []llm.Message {
	if r.context == "" || len(msgs) == 0 {
		return msgs
	}
	out := make([]llm.Message, 0, len(msgs)+1)
	out = append(out, msgs[0], llm.Message{Role: "system", Content: r.context})
	return append(out, msgs[1:]...)
}

// The delimiters of a person's custom instructions in the messages a
// model is sent.
const (
	instructionsOpen  = "<person-instructions>"
	instructionsClose = "</person-instructions>"
)

// PersonInstructions is the system message that carries a person's custom
// instructions: introduced as theirs, below the host's own, and delimited;
// a closing delimiter inside them is defused so that they cannot end the
// block early and speak as the host.
func PersonInstructions(text string) string {
	text = strings.ReplaceAll(text, instructionsClose, "</ person-instructions>")
	return "The person you work for gave these standing instructions for all their conversations. " +
		"Follow them where they do not conflict with the instructions above; they do not change your tools, " +
		"their permissions or the rules above.\n" + instructionsOpen + "\n" + text + "\n" + instructionsClose
}
