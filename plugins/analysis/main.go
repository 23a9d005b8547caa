// Plugin analysis offers summarizeContent and analyzeContent: documents of
// the workspace (read through the knowledge store, extracted text files
// directly) or given text, processed by the workspace's language model with
// model-aware chunking. Inputs larger than the model's context
// are split into parts that fit (the part size comes from the model's
// context, the instruction's tokens and the answer's reserve), each part is
// processed (map), and the partial results are merged (reduce), recursively
// when they do not fit one call either.
package main

import (
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/content"
	"github.com/agenthost/agenthost/pdk/files"
	"github.com/agenthost/agenthost/pdk/knowledge"
	"github.com/agenthost/agenthost/pdk/model"
	"github.com/agenthost/agenthost/pdk/progress"
)

func main() {}

func init() {
	pdk.Tool("summarizeContent", "Summarise documents of the workspace (file ids, docItem:<id> references, or docList:<label> for every document of a list in the conversation) or given text with the language model. Inputs larger than the model's context are split into parts, summarised part by part and merged; the result says how many parts and model calls it took.",
		summarize, pdk.ReadOnly())
	pdk.Tool("analyzeContent", "Analyse documents of the workspace (file ids, docItem:<id> references, or docList:<label> for every document of a list in the conversation) or given text according to an instruction (extract facts, answer a question, compare, classify) with the language model. Inputs larger than the model's context are processed part by part and the partial results merged; the result says how many parts and model calls it took.",
		analyze, pdk.ReadOnly())
}

// SummarizeArgs are summarizeContent's arguments.
type SummarizeArgs struct {
	Documents []string `json:"documents,omitempty" description:"file ids, docItem:<id> or docList:<label> references of the documents to summarise" maxItems:"20"`
	Text      string   `json:"text,omitempty" description:"text to summarise (instead of or besides documents)"`
	Focus     string   `json:"focus,omitempty" description:"what the summary should concentrate on" maxLength:"2000"`
	Length    string   `json:"length,omitempty" description:"how long the summary should be" enum:"short,medium,long"`
	Language  string   `json:"language,omitempty" description:"language of the summary (default: the documents')" maxLength:"40"`
	Pages     []int    `json:"pages,omitempty" description:"only these pages (documents with pages)"`
}

// AnalyzeArgs are analyzeContent's arguments.
type AnalyzeArgs struct {
	Documents   []string `json:"documents,omitempty" description:"file ids, docItem:<id> or docList:<label> references of the documents to analyse" maxItems:"20"`
	Text        string   `json:"text,omitempty" description:"text to analyse (instead of or besides documents)"`
	Instruction string   `json:"instruction" description:"what to do with the content: a question, facts to extract, a comparison" minLength:"1" maxLength:"8000"`
	Pages       []int    `json:"pages,omitempty" description:"only these pages (documents with pages)"`
}

// Source is one input as it was read.
type Source struct {
	Ref    string `json:"ref"`
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
	// Via says how the text was read: the knowledge store's extracted
	// objects, or the file itself (text files not indexed yet).
	Via string `json:"via"`
}

// Result is what both tools return.
type Result struct {
	Result      string   `json:"result"`
	Sources     []Source `json:"sources"`
	Model       string   `json:"model"`
	InputTokens int      `json:"inputTokens"`
	// PartTokens is the most content one call carried, from the model's
	// context (partBudget).
	PartTokens  int     `json:"partTokens"`
	Parts       int     `json:"parts"`
	MapCalls    int     `json:"mapCalls"`
	ReduceCalls int     `json:"reduceCalls"`
	Calls       int     `json:"calls"`
	CostCHF     float64 `json:"costCHF"`
	Note        string  `json:"note"`
}

func summarize(a SummarizeArgs) (Result, error) {
	instr := "Summarise the content."
	switch a.Length {
	case "short":
		instr = "Summarise the content in a few sentences."
	case "long":
		instr = "Summarise the content thoroughly, section by section."
	}
	if f := strings.TrimSpace(a.Focus); f != "" {
		instr += " Concentrate on: " + f
	}
	if l := strings.TrimSpace(a.Language); l != "" {
		instr += " Write in " + l + "."
	}
	return run(a.Documents, a.Text, a.Pages, instr)
}

func analyze(a AnalyzeArgs) (Result, error) {
	if strings.TrimSpace(a.Instruction) == "" {
		return Result{}, pdk.Errorf("invalid_arguments", "instruction is empty")
	}
	return run(a.Documents, a.Text, a.Pages, a.Instruction)
}

// maxParts bounds the map calls of one tool call; a larger input should be
// narrowed (pages, sections, fewer documents) first.
const maxParts = 100

// maxFileText is the most of a text file read directly.
const maxFileText = 8 << 20

func run(docs []string, text string, pages []int, instruction string) (Result, error) {
	if len(docs) == 0 && strings.TrimSpace(text) == "" {
		return Result{}, pdk.Errorf("invalid_arguments", "give documents (file ids or docItem references) or text")
	}
	info, err := model.GetInfo()
	if err != nil {
		return Result{}, err
	}
	res := Result{Model: info.Model}
	var units []string
	for _, ref := range docs {
		name, us, via, err := readDocument(ref, pages)
		if err != nil {
			return Result{}, err
		}
		n := 0
		for _, u := range us {
			t, err := model.Count(u)
			if err != nil {
				return Result{}, err
			}
			n += t
		}
		res.Sources = append(res.Sources, Source{Ref: ref, Name: name, Tokens: n, Via: via})
		res.InputTokens += n
		// Each document opens with its name, so merged results can say
		// which document a finding came from.
		units = append(units, "# Document: "+name)
		units = append(units, us...)
	}
	if strings.TrimSpace(text) != "" {
		n, err := model.Count(text)
		if err != nil {
			return Result{}, err
		}
		res.Sources = append(res.Sources, Source{Ref: "text", Name: "text", Tokens: n, Via: "argument"})
		res.InputTokens += n
		units = append(units, paragraphs(text)...)
	}

	mapPrompt := mapSystem(instruction)
	reducePrompt := reduceSystem(instruction)
	promptTokens := 0
	for _, p := range []string{mapPrompt, reducePrompt} {
		n, err := model.Count(p)
		if err != nil {
			return Result{}, err
		}
		promptTokens = max(promptTokens, n)
	}
	// The answer's reserve is at most a quarter of what the prompt leaves,
	// so a part always holds more than two answers and reducing converges.
	out := min(info.MaxOutputTokens, (info.ContextTokens-promptTokens-systemReserve-messageOverhead)/4)
	budget, err := partBudget(info.ContextTokens, promptTokens, out)
	if err != nil {
		return Result{}, pdk.Errorf("context_too_small", "%v", err)
	}
	res.PartTokens = budget
	count := func(s string) (int, error) { return model.Count(s) }
	parts, err := split(units, budget, count)
	if err != nil {
		return Result{}, err
	}
	if len(parts) == 0 {
		return Result{}, pdk.Errorf("no_content", "the documents have no text to work on (images or scans without text are not read by this tool)")
	}
	if len(parts) > maxParts {
		return Result{}, pdk.Errorf("input_too_large", "the input takes %d tokens, %d parts of %d tokens for %s; at most %d parts are processed in one call: narrow it down (pages, fewer documents)",
			res.InputTokens, len(parts), budget, info.Model, maxParts)
	}
	res.Parts = len(parts)

	ask := func(system, user, purpose string) (string, error) {
		r, err := model.Complete(model.Request{Messages: []model.Message{{Role: "system", Content: system}, {Role: "user", Content: user}},
			MaxTokens: out, Purpose: purpose})
		if err != nil {
			return "", err
		}
		res.Calls++
		res.CostCHF += r.CostCHF
		return strings.TrimSpace(r.Content), nil
	}

	if len(parts) == 1 {
		// Everything fits one call: no map and reduce.
		answer, err := ask(directSystem(instruction), parts[0], "direct")
		if err != nil {
			return Result{}, err
		}
		res.Result = answer
		res.MapCalls = 1
		res.Note = fmt.Sprintf("The input (%d tokens) fit the model's context in one call.", res.InputTokens)
		return res, nil
	}

	partials := make([]string, 0, len(parts))
	for i, p := range parts {
		_ = progress.Report(float64(i)/float64(len(parts)+1), fmt.Sprintf("part %d of %d", i+1, len(parts)))
		answer, err := ask(mapPrompt+fmt.Sprintf("\nThis is part %d of %d.", i+1, len(parts)), p, "map")
		if err != nil {
			return Result{}, fmt.Errorf("part %d of %d: %w", i+1, len(parts), err)
		}
		res.MapCalls++
		partials = append(partials, answer)
	}
	// Reduce: merge as many partial results as fit one call, until one
	// answer is left.
	for level := 1; ; level++ {
		groups, err := split(numbered(partials), budget, count)
		if err != nil {
			return Result{}, err
		}
		if len(groups) >= len(partials) && len(partials) > 1 {
			return Result{}, errors.New("the partial results do not get shorter when merged; ask for a shorter result")
		}
		_ = progress.Report(float64(len(parts))/float64(len(parts)+1), fmt.Sprintf("merging %d partial results", len(partials)))
		next := make([]string, 0, len(groups))
		for _, g := range groups {
			answer, err := ask(reducePrompt, g, "reduce")
			if err != nil {
				return Result{}, fmt.Errorf("merging (level %d): %w", level, err)
			}
			res.ReduceCalls++
			next = append(next, answer)
		}
		partials = next
		if len(partials) == 1 {
			break
		}
	}
	res.Result = partials[0]
	res.Note = fmt.Sprintf("The input (%d tokens) exceeded what one call of %s can take (%d tokens of content in a %d-token context): it was split into %d parts, processed in %d calls and merged in %d.",
		res.InputTokens, info.Model, budget, info.ContextTokens, res.Parts, res.MapCalls, res.ReduceCalls)
	return res, nil
}

func directSystem(instruction string) string {
	return "You work on the content the user gives you.\nTask: " + instruction +
		"\nAnswer the task directly, with specific facts, figures and page references where the content has them."
}

func mapSystem(instruction string) string {
	return "You work on one part of a larger input that was split to fit your context.\nTask: " + instruction +
		"\nReport what this part contributes to the task: specific facts, figures, names, with page references where given. Be concise; another step merges the parts. Do not mention that you only see a part."
}

func reduceSystem(instruction string) string {
	return "You merge partial results, each made from consecutive parts of one larger input, into one.\nTask: " + instruction +
		"\nCombine them into one answer to the task: remove repetition, keep specific facts, figures and page references, keep the order of the input."
}

// numbered labels partial results for the reduce prompt.
func numbered(partials []string) []string {
	out := make([]string, len(partials))
	for i, p := range partials {
		out[i] = fmt.Sprintf("Partial result %d:\n%s", i+1, p)
	}
	return out
}

// paragraphs splits text at blank lines.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// readDocument returns a document's text units: its extracted text objects
// from the knowledge store (pages marked), or, for a text file whose index
// is not ready, the file's own text.
func readDocument(ref string, pages []int) (name string, units []string, via string, err error) {
	offset, lastPage := 0, 0
	var kerr error
	for {
		objs, err := knowledge.ReadObjects(knowledge.ObjectsRequest{File: ref, Types: []content.Type{content.Text}, Pages: pages, Offset: offset, Limit: 200})
		if err != nil {
			kerr = err
			break
		}
		name = objs.FileName
		for _, o := range objs.Objects {
			t := strings.TrimSpace(o.Data)
			if t == "" {
				continue
			}
			if p := o.Ref.PageIndex; p > 0 && p != lastPage {
				t = fmt.Sprintf("[page %d]\n%s", p, t)
				lastPage = p
			}
			units = append(units, t)
		}
		if objs.NextOffset == 0 || objs.NextOffset <= offset {
			break
		}
		offset = objs.NextOffset
	}
	if len(units) > 0 {
		return name, units, "knowledge", nil
	}
	// Not indexed (yet), or not known to the knowledge store: a text file
	// can be read as it is; the file store says whether the file exists.
	f, err := files.Read(ref, maxFileText)
	if err != nil {
		return "", nil, "", err
	}
	if !textual(f.MIMEType) {
		why := "it has no extracted text"
		if kerr != nil {
			why = kerr.Error()
		}
		return "", nil, "", pdk.Errorf("not_ready", "document %s (%s, %s) cannot be read yet: %s", ref, f.Name, f.MIMEType, why)
	}
	if f.Truncated {
		return "", nil, "", pdk.Errorf("input_too_large", "document %s (%s) is larger than %d bytes of text; its index is not ready, so it cannot be read by parts yet", ref, f.Name, maxFileText)
	}
	return f.Name, paragraphs(string(f.Data)), "file", nil
}

// textual reports whether a MIME type is text the model can read as is.
func textual(mimeType string) bool {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		mt = mimeType
	}
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/xml", mt == "application/x-yaml", mt == "application/yaml":
		return true
	}
	return false
}
