package rounds

import (
	"context"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/host/workflows"
)

// Titler makes the call that names a conversation (the llm client).
type Titler interface {
	Chat(ctx context.Context, req llm.ChatRequest, onDelta func(llm.Delta)) (llm.ChatResponse, error)
}

// WithTitles names each new conversation after its first exchange with
// one call of the title chain (modeluse.OpTitle). Without it a
// conversation keeps the start of its first prompt as its name. It returns s.
func (s *Service) WithTitles(m Titler) *Service {
	s.titler = m
	return s
}

// The title call's bounds: what of the exchange the model reads, what it
// may answer, how long the round's end waits for it.
const (
	titleInputRunes = 2000
	titleMaxRunes   = 80
	titleMaxTokens  = 32
	titleTimeout    = 30 * time.Second
)

const titleInstruction = "Write a short title (3 to 7 words) for the conversation that begins with the exchange below, " +
	"in the language of the user's message. Reply with the title only: no quotes, no label, no full stop at the end."

// nameConversation gives a conversation whose first round just completed
// a title made from its first exchange. The name changes only while it is
// still the one taken from the prompt: a person who renamed the
// conversation meanwhile keeps their name. The call is billed to the
// workflow (purpose "title") and counted in its statistics; a failed call
// or an unusable reply leaves the name as it was. A `renamed` event tells
// open clients.
func (s *Service) nameConversation(ctx context.Context, p tenancy.Principal, w workflows.Workflow, prompt, answer, language string) {
	was := title(prompt)
	if s.titler == nil || w.Name != was || strings.TrimSpace(answer) == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, titleTimeout)
	defer cancel()
	ctx = llm.WithAttribution(ctx, llm.Attribution{TenantID: p.TenantID, WorkspaceID: w.WorkspaceID, UserID: p.UserID,
		WorkflowID: w.ID, Purpose: "title"})
	instruction := titleInstruction
	if language != "" {
		instruction += " The user's language is " + language + "."
	}
	resp, err := s.titler.Chat(ctx, llm.ChatRequest{Operation: modeluse.OpTitle, MaxTokens: titleMaxTokens, Messages: []llm.Message{
		{Role: "system", Content: instruction},
		{Role: "user", Content: "User: " + clipRunes(prompt, titleInputRunes) + "\n\nAssistant: " + clipRunes(answer, titleInputRunes)},
	}}, nil)
	stats := workflows.Stats{TokensUsed: int64(resp.Usage.PromptTokens + resp.Usage.CompletionTokens), CostCHF: resp.Usage.Cost}
	u := workflows.Update{Stats: stats}
	name := cleanTitle(resp.Message.Content)
	switch {
	case err != nil:
		s.logger.Warn("rounds: naming the conversation failed; it keeps its name", "workflow", w.ID, "err", err)
	case name == "":
		s.logger.Warn("rounds: the title model gave no usable title; the conversation keeps its name", "workflow", w.ID)
	default:
		u.Name, u.NameWas = &name, &was
	}
	if u.Name == nil && stats == (workflows.Stats{}) {
		return
	}
	got, err := s.wf.Update(ctx, p, w.ID, u)
	if err != nil {
		s.recordFailed("rounds: naming the conversation", w.ID, err)
		return
	}
	if u.Name == nil || got.Name != name {
		return // no title, or the person renamed it first
	}
	if _, err := s.wf.Append(ctx, p, w.ID, workflows.EventRenamed, workflows.RenamedData{Name: name}); err != nil {
		s.recordFailed("rounds: the renamed event", w.ID, err)
	}
}

// cleanTitle makes a title of a model's reply: its first non-empty line,
// without a "Title:" label, quotes, Markdown marks or a closing full stop,
// spaces collapsed, at most titleMaxRunes (cut at a word). Control and
// format characters go: a title is shown as plain text everywhere.
func cleanTitle(reply string) string {
	var line string
	for l := range strings.SplitSeq(reply, "\n") {
		if line = strings.TrimSpace(l); line != "" {
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, line)
	line = strings.TrimLeft(line, "#*_ ")
	if i := strings.IndexByte(line, ':'); i > 0 && i <= 6 && strings.EqualFold(strings.TrimSpace(line[:i]), "title") {
		line = line[i+1:]
	}
	line = strings.Trim(strings.TrimSpace(line), "\"'`*_“”„«»‘’")
	line = strings.TrimRight(line, ".。 ")
	line = strings.Join(strings.Fields(line), " ")
	if utf8.RuneCountInString(line) > titleMaxRunes {
		r := []rune(line)[:titleMaxRunes]
		if i := strings.LastIndexByte(string(r), ' '); i > titleMaxRunes/2 {
			line = string(r)[:i] + "…"
		} else {
			line = string(r) + "…"
		}
	}
	return line
}

// clipRunes keeps the first n runes of s.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
