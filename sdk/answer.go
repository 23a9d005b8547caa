package sdk

// Answer folds a round's events into what a client shows, as the
// workspace UI does: the text of the answer being streamed, replaced by
// the message once it is stored; when the round restarts on another host
// (roundRestarted: its host was killed or stopped) the cut attempt's
// partial message is dropped and what that attempt cost is kept, so Cost
// is the round's cost as recorded, all attempts together.
type Answer struct {
	// MessageID and Text are the answer's; Done once its message arrived.
	MessageID string
	Text      string
	Done      bool
	// Model is the model that answered (agentProgress, agentSummary).
	Model string
	// Cost is the round's cost so far, every attempt's, exact.
	Cost CHF
	// Restarts counts the attempts cut by their host's stop.
	Restarts int

	prior   CHF // the cut attempts' cost
	attempt CHF // the current attempt's cost so far
}

// Apply takes one event of the stream, in order.
func (a *Answer) Apply(ev Event) {
	switch p := ev.Payload.(type) {
	case *ChunkData:
		if a.Done {
			return
		}
		if p.MessageID != a.MessageID {
			a.MessageID, a.Text = p.MessageID, ""
		}
		a.Text += p.Text
	case *Message:
		if p.Role == "assistant" && (p.ID == a.MessageID || a.MessageID == "") {
			a.MessageID, a.Text, a.Done = p.ID, p.Content, true
		}
	case *RoundRestartedData:
		// The cut attempt's message never ends: drop it.
		if !a.Done {
			a.MessageID, a.Text = "", ""
		}
		a.prior, a.attempt = a.prior.Add(a.attempt), ""
		a.Restarts++
	case *ToolCallData:
		a.costSoFar(p.CostCHF)
	case *AgentProgressData:
		a.costSoFar(p.CostCHF)
		if p.Model != "" {
			a.Model = p.Model
		}
	case *AgentSummaryData:
		a.costSoFar(p.CostCHF)
		if p.Model != "" {
			a.Model = p.Model
		}
	}
	a.Cost = a.prior.Add(a.attempt)
}

// costSoFar notes the current attempt's running cost (each event carries
// the attempt's total, not an increment).
func (a *Answer) costSoFar(c CHF) {
	if c != "" {
		a.attempt = c
	}
}
