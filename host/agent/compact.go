package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/workflows"
)

// defaultWindow is assumed when the model's context window is not configured.
const defaultWindow = 8192

// compact folds older rounds into the running summary, rather than dropping
// them, so the
// agent keeps the thread without the prompt outgrowing the model: the last
// KeepRounds rounds stay verbatim; older ones are summarised by the cheaper
// summary model when the prompt passes SummarizeAt of the context window, or
// every KeepRounds rounds beyond the kept ones, so a long run costs a summary
// call every few rounds rather than every round. The summary's cost counts
// toward the budget.
func (r *run) compact(ctx context.Context) error {
	return r.fold(ctx, r.cfg.KeepRounds, false)
}

// fold summarises all but the last keep rounds: when the prompt presses
// on the window or periodically, or at once when now is set (the provider
// refused the prompt as too long).
func (r *run) fold(ctx context.Context, keep int, now bool) error {
	if len(r.rounds) <= keep {
		return nil
	}
	window := r.window()
	tokens := r.promptTokens()
	pressure := float64(tokens) > r.cfg.SummarizeAt*float64(window)
	periodic := len(r.rounds) >= 2*keep
	if !pressure && !periodic && !now {
		return nil
	}
	fold := r.rounds[:len(r.rounds)-keep]
	from, to := fold[0].from, fold[len(fold)-1].to
	r.emit(ctx, workflows.EventStatus, workflows.StatusData{Status: workflows.StatusRunning, Label: fmt.Sprintf("Summarising %d earlier round(s)", len(fold))})
	req := llm.ChatRequest{Operation: modeluse.OpSummary, Messages: []llm.Message{
		{Role: "system", Content: "You keep the running summary of an agent's work. Keep every fact, number, " +
			"file id, source and decision that later steps may need; drop chatter. Reply with the updated summary only."},
		{Role: "user", Content: "Summary so far:\n" + orNone(r.summary) + "\n\nNew steps to fold in:\n" + render(r.msgs[from:to])},
	}}
	cctx, endCall := r.cfg.Observer.StartModelCall(ctx, modeluse.OpSummary, "")
	resp, err := r.a.model.Chat(cctx, req, nil)
	if errors.Is(err, llm.ErrContextLength) {
		// The rounds to fold are too long for the summary model as they
		// are: fold them with their tool results cut short.
		req.Messages[1].Content = "Summary so far:\n" + orNone(r.summary) + "\n\nNew steps to fold in:\n" + renderClipped(r.msgs[from:to], 300)
		resp, err = r.a.model.Chat(cctx, req, nil)
	}
	endCall(resp.Usage, resp.Tries, err)
	r.account(resp.Usage)
	if err != nil || strings.TrimSpace(resp.Message.Content) == "" {
		// Without a summary the rounds stay verbatim; the run goes on.
		r.a.logger.Warn("agent: summarising earlier rounds failed", "err", err)
		return err
	}
	r.summary = strings.TrimSpace(resp.Message.Content)
	summaryMsg := llm.Message{Role: "system", Content: "Summary of the conversation so far:\n" + r.summary}

	msgs := append([]llm.Message{}, r.msgs[:from]...)
	shift := -(to - from)
	r.tokens.splice(from, to)
	switch {
	case r.in.ContextSource != nil:
		// The summary reaches the model through the next round's context.
	case len(msgs) > 1 && strings.HasPrefix(msgs[1].Content, "Summary of the conversation so far:") && msgs[1].Role == "system":
		msgs[1] = summaryMsg
		r.tokens.put(1, summaryMsg, false)
	default:
		msgs = append(msgs[:1], append([]llm.Message{summaryMsg}, msgs[1:]...)...)
		r.tokens.put(1, summaryMsg, true)
		shift++
	}
	r.msgs = append(msgs, r.msgs[to:]...)
	kept := append([]span{}, r.rounds[len(fold):]...)
	for i := range kept {
		kept[i].from += shift
		kept[i].to += shift
	}
	r.rounds = kept
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// render writes messages as plain text for the summary model.
func render(msgs []llm.Message) string { return renderClipped(msgs, 2000) }

// renderClipped is render with each tool result cut to clip bytes.
func renderClipped(msgs []llm.Message, clip int) string {
	var b strings.Builder
	for _, m := range msgs {
		switch {
		case len(m.ToolCalls) > 0:
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "assistant called %s(%s)\n", tc.Name, tc.Arguments)
			}
			if m.Content != "" {
				fmt.Fprintf(&b, "assistant: %s\n", m.Content)
			}
		case m.Role == "tool":
			fmt.Fprintf(&b, "result of %s: %s\n", m.Name, clipText(m.Content, clip))
		default:
			fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content)
		}
	}
	return b.String()
}
