package sdk_test

import (
	"encoding/json"
	"testing"

	"github.com/agenthost/agenthost/host/workflows"
	"github.com/agenthost/agenthost/sdk"
)

// event is a server event as the stream decodes it: the server's payload
// type marshalled, decoded into the SDK's.
func event(t *testing.T, typ workflows.EventType, data, into any) sdk.Event {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatal(err)
	}
	return sdk.Event{Type: sdk.EventType(typ), Data: raw, Payload: into}
}

// TestAnswerAfterRestart: a round whose host was killed while its tool ran
// (its toolCall carried the model call's cost, no agentProgress followed)
// and which restarted elsewhere: the cut attempt's partial message is
// dropped, the answer is the new attempt's, and the cost is both
// attempts', exactly as billed.
func TestAnswerAfterRestart(t *testing.T) {
	var a sdk.Answer
	for _, ev := range []sdk.Event{
		event(t, workflows.EventAgentProgress, workflows.AgentProgressData{Round: 1, CostCHF: "0.14"}, new(sdk.AgentProgressData)),
		event(t, workflows.EventToolCall, workflows.ToolCallData{Round: 2, CallID: "c1", Tool: "lookup", Arguments: json.RawMessage(`{}`), CostCHF: "0.28"}, new(sdk.ToolCallData)),
		event(t, workflows.EventChunk, workflows.ChunkData{MessageID: "m1", Text: "The invoices of "}, new(sdk.ChunkData)),
		event(t, workflows.EventRoundRestarted, workflows.RoundRestartedData{Round: 1, Reason: workflows.RestartHostDied, FromHost: "h1"}, new(sdk.RoundRestartedData)),
		event(t, workflows.EventChunk, workflows.ChunkData{MessageID: "m2", Text: "Three "}, new(sdk.ChunkData)),
		event(t, workflows.EventChunk, workflows.ChunkData{MessageID: "m2", Text: "invoices."}, new(sdk.ChunkData)),
		event(t, workflows.EventAgentSummary, workflows.AgentSummaryData{Reason: "completed", CostCHF: "0.14", Model: "backup"}, new(sdk.AgentSummaryData)),
		event(t, workflows.EventMessage, workflows.Message{ID: "m2", Role: workflows.RoleAssistant, Content: "Three invoices."}, new(sdk.Message)),
	} {
		a.Apply(ev)
	}
	if a.MessageID != "m2" || a.Text != "Three invoices." || !a.Done || a.Restarts != 1 || a.Model != "backup" {
		t.Errorf("answer %+v", a)
	}
	if a.Cost != "0.42" {
		t.Errorf("cost %q, want 0.42", a.Cost)
	}
}

func TestCHF(t *testing.T) {
	tests := []struct {
		a, b sdk.CHF
		want sdk.CHF
	}{
		{"0.1", "0.2", "0.30"},
		{"0.000000001", "1", "1.000000001"},
		{"", "0.42", "0.42"},
		{"-0.5", "0.25", "-0.25"},
	}
	for _, tc := range tests {
		if got := tc.a.Add(tc.b); got != tc.want {
			t.Errorf("%q + %q = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	if f := sdk.CHF("0.42").Float(); f != 0.42 {
		t.Errorf("Float %v", f)
	}
}
