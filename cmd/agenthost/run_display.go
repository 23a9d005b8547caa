package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agenthost/agenthost/sdk"
)

// runDisplay shows a followed workflow: the answer on out, progress on err.
// On a terminal (tty) the progress is one status line redrawn in place,
// with finished tool calls printed above it; otherwise every step is a
// plain line, so a log or CI shows the same facts.
type runDisplay struct {
	out, err io.Writer
	tty      bool

	statusText string
	shown      bool // the status line is drawn
	midAnswer  bool // the answer's last text did not end a line
	spin       int

	calls    map[string]*runToolCall
	streamed map[string]string // message id → answer text written

	round, maxRounds, toolCalls int
	costCHF                     float64
	priorCHF                    float64 // attempts of the round cut by a host's stop
	reason                      string  // why the agent run ended, when not completed
	started                     time.Time
}

type runToolCall struct {
	tool, args string
	started    time.Time
}

func newRunDisplay(out, err io.Writer, tty bool) *runDisplay {
	return &runDisplay{out: out, err: err, tty: tty, calls: map[string]*runToolCall{}, streamed: map[string]string{}, started: time.Now()}
}

// runStatusWidth keeps the status line within a narrow terminal's width, so
// that redrawing it never wraps.
const runStatusWidth = 78

var runSpinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// status sets what is happening now: the status line on a terminal, a
// plain line elsewhere.
func (d *runDisplay) status(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if !d.tty {
		fmt.Fprintln(d.err, text)
		return
	}
	d.statusText = text
	d.draw()
}

// step prints a lasting line that ends what the status line showed.
func (d *runDisplay) step(format string, args ...any) {
	d.statusText = ""
	d.line(format, args...)
}

// line prints a lasting line of progress.
func (d *runDisplay) line(format string, args ...any) {
	d.clear()
	if d.tty && d.midAnswer {
		fmt.Fprintln(d.out)
		d.midAnswer = false
	}
	fmt.Fprintf(d.err, format+"\n", args...)
	d.draw()
}

func (d *runDisplay) clear() {
	if d.shown {
		fmt.Fprint(d.err, "\r\033[K")
		d.shown = false
	}
}

// draw redraws the status line (on a terminal, when no answer line is
// being written).
func (d *runDisplay) draw() {
	if !d.tty || d.midAnswer || d.statusText == "" {
		return
	}
	text := runSpinner[d.spin%len(runSpinner)] + " " + d.statusText
	for _, c := range d.running() {
		text += fmt.Sprintf(" · %s %s", c.tool, runDuration(time.Since(c.started)))
	}
	if d.costCHF > 0 {
		text += fmt.Sprintf(" · CHF %.4f", d.costCHF)
	}
	if utf8.RuneCountInString(text) > runStatusWidth {
		text = string([]rune(text)[:runStatusWidth-1]) + "…"
	}
	fmt.Fprint(d.err, "\r\033[K"+text)
	d.shown = true
}

func (d *runDisplay) running() []*runToolCall {
	var out []*runToolCall
	for _, c := range d.calls {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *runToolCall) int { return a.started.Compare(b.started) })
	return out
}

// tick animates the status line.
func (d *runDisplay) tick() {
	d.spin++
	d.draw()
}

// event shows one event of the workflow.
func (d *runDisplay) event(ev sdk.Event) {
	switch p := ev.Payload.(type) {
	case *sdk.StatusData:
		if p.Label != "" {
			d.status("%s", p.Label)
		}
	case *sdk.ToolCallData:
		d.calls[p.CallID] = &runToolCall{tool: p.Tool, args: runArgsSummary(p.Arguments), started: time.Now()}
		if !d.tty {
			fmt.Fprintf(d.err, "tool %s(%s) …\n", p.Tool, d.calls[p.CallID].args)
		}
		d.draw()
	case *sdk.ToolResultData:
		args := ""
		if c, ok := d.calls[p.CallID]; ok {
			args = c.args
			delete(d.calls, p.CallID)
		}
		d.toolCalls++
		took := runDuration(time.Duration(p.DurationMS) * time.Millisecond)
		if p.OK {
			d.line("tool %s(%s) ok %s", p.Tool, args, took)
		} else {
			d.line("tool %s(%s) error %s: %s", p.Tool, args, took, strings.TrimPrefix(runOr(p.ErrorCode+": "+p.Error, "failed"), ": "))
		}
	case *sdk.ChunkData:
		d.answer(p.MessageID, p.Text)
	case *sdk.RoundRestartedData:
		// The answer so far never ends: say so, and the new attempt's
		// text follows on a line of its own.
		if d.midAnswer {
			fmt.Fprintln(d.out)
			d.midAnswer = false
		}
		d.priorCHF = d.costCHF
		d.line("the host running this round stopped (%s); it runs again from the request on another host", p.Reason)
	case *sdk.Message:
		if p.Role == "assistant" && p.Content != "" {
			done := d.streamed[p.ID]
			if rest, ok := strings.CutPrefix(p.Content, done); ok {
				d.answer(p.ID, rest)
			} else if done == "" {
				d.answer(p.ID, p.Content)
			}
			if d.midAnswer {
				fmt.Fprintln(d.out)
				d.midAnswer = false
			}
		}
	case *sdk.AgentProgressData:
		d.round, d.maxRounds, d.costCHF = p.Round, p.MaxRounds, d.priorCHF+p.CostCHF.Float()
		if !d.tty {
			fmt.Fprintf(d.err, "round %d/%d done · %d tool calls · CHF %s so far\n", p.Round, p.MaxRounds, p.ToolCalls, p.CostCHF)
		}
		d.draw()
	case *sdk.AgentSummaryData:
		d.costCHF = d.priorCHF + p.CostCHF.Float()
		if p.Reason != "completed" && p.Reason != "handedOff" {
			d.reason = p.Reason
		}
	case *sdk.FileCreatedData:
		d.line("file created: %s (%s, file %s)", p.Name, runByteSize(p.Size), p.FileID)
	case *sdk.EndData:
		d.clear()
		d.statusText = ""
	}
}

// answer writes answer text to out.
func (d *runDisplay) answer(messageID, text string) {
	if text == "" {
		return
	}
	d.clear()
	fmt.Fprint(d.out, text)
	d.streamed[messageID] += text
	d.midAnswer = !strings.HasSuffix(text, "\n")
}

// summary prints the run's totals.
func (d *runDisplay) summary(cost string) {
	ended := ""
	if d.reason != "" {
		ended = " · ended early: " + d.reason
	}
	d.line("done in %s · %d rounds · %d tool calls · %s%s", runDuration(time.Since(d.started)), d.round, d.toolCalls, cost, ended)
}

// finish leaves the terminal clean.
func (d *runDisplay) finish() {
	d.clear()
	if d.midAnswer {
		fmt.Fprintln(d.out)
		d.midAnswer = false
	}
}

// runArgsSummary shortens a tool call's arguments to one line: key=value, long
// values cut.
func runArgsSummary(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return runClip(strings.Join(strings.Fields(string(raw)), " "), 60)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		v, _ := json.Marshal(m[k])
		parts = append(parts, k+"="+runClip(string(v), 40))
	}
	return runClip(strings.Join(parts, " "), 80)
}

func runClip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func runDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
