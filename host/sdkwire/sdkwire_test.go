// Package sdkwire_test checks the SDK module (sdk/) against the server it is
// versioned with: its event payloads carry the JSON fields of
// host/workflows' types, and what the server sends decodes into them. The
// SDK's own module cannot import the server's packages (that would bring the
// server's whole dependency graph to every SDK user), so these checks live
// in the server's module, which requires the SDK through a replace.
package sdkwire_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
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

// TestEventPayloadsMatchTheServer: the payload types carry the JSON fields
// of the server's (host/workflows), so nothing the server sends is lost.
func TestEventPayloadsMatchTheServer(t *testing.T) {
	for _, pair := range [][2]any{
		{sdk.StatusData{}, workflows.StatusData{}}, {sdk.ChunkData{}, workflows.ChunkData{}},
		{sdk.ToolCallData{}, workflows.ToolCallData{}}, {sdk.ToolResultData{}, workflows.ToolResultData{}},
		{sdk.AgentProgressData{}, workflows.AgentProgressData{}}, {sdk.AgentSummaryData{}, workflows.AgentSummaryData{}},
		{sdk.FileCreatedData{}, workflows.FileCreatedData{}}, {sdk.FileEditProposalData{}, workflows.FileEditProposalData{}},
		{sdk.FileVersionData{}, workflows.FileVersionData{}}, {sdk.DataSourceAccessData{}, workflows.DataSourceAccessData{}},
		{sdk.VoiceResponseData{}, workflows.VoiceResponseData{}}, {sdk.BackgroundJobData{}, workflows.BackgroundJobData{}},
		{sdk.RoundRestartedData{}, workflows.RoundRestartedData{}},
		{sdk.ApprovalRequestedData{}, workflows.ApprovalRequestedData{}}, {sdk.ApprovalDecidedData{}, workflows.ApprovalDecidedData{}},
		{sdk.BranchSelectedData{}, workflows.BranchSelectedData{}}, {sdk.MessageFeedbackData{}, workflows.MessageFeedbackData{}},
		{sdk.RenamedData{}, workflows.RenamedData{}}, {sdk.EndData{}, workflows.EndData{}},
	} {
		if got, want := jsonFields(pair[0]), jsonFields(pair[1]); got != want {
			t.Errorf("%T has fields %s, the server's %T %s", pair[0], got, pair[1], want)
		}
	}
	var ours []string
	for _, typ := range workflows.EventTypes() {
		ours = append(ours, string(typ))
		if sdk.EventType(typ).Terminal() != typ.Terminal() {
			t.Errorf("%s: Terminal differs", typ)
		}
	}
	known := []sdk.EventType{sdk.EventMessage, sdk.EventStatus, sdk.EventChunk, sdk.EventToolCall, sdk.EventToolResult,
		sdk.EventAgentProgress, sdk.EventAgentSummary, sdk.EventFileCreated, sdk.EventFileEditProposal, sdk.EventFileVersion,
		sdk.EventDataSourceAccess, sdk.EventVoiceResponse, sdk.EventBackgroundJob, sdk.EventRoundRestarted, sdk.EventApprovalRequested, sdk.EventApprovalDecided, sdk.EventBranchSelected, sdk.EventMessageFeedback, sdk.EventRenamed, sdk.EventComplete, sdk.EventStopped, sdk.EventError}
	if fmt.Sprint(known) != fmt.Sprint(ours) {
		t.Errorf("event types %v, the server's %v", known, ours)
	}
}

func jsonFields(v any) string {
	t := reflect.TypeOf(v)
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		out = append(out, f.Tag.Get("json")+":"+f.Type.Kind().String())
	}
	return strings.Join(out, " ")
}
