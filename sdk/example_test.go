package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/agenthost/agenthost/sdk"
)

// A client of a server, its workspaces listed. Run it against a server
// (AGENTHOST_URL, AGENTHOST_TOKEN, the names `agenthost run` uses);
// TestOutsideTheRepositoryWithGoGet in cmd/agenthost builds and runs this
// program against one.
func ExampleNew() {
	c, err := sdk.New(os.Getenv("AGENTHOST_URL"), sdk.WithToken(os.Getenv("AGENTHOST_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	workspaces, err := c.ListWorkspaces(context.Background())
	var problem *sdk.Error
	if errors.As(err, &problem) {
		log.Fatalf("the server refused: %d %s", problem.Status, problem.Detail)
	}
	for _, w := range workspaces {
		fmt.Println(w.ID, w.Name)
	}
}

// Following a workflow's answer as its events arrive: Answer keeps the
// text of the current attempt and the exact cost of every attempt.
func ExampleAnswer() {
	var a sdk.Answer
	for _, ev := range []sdk.Event{
		{Type: sdk.EventChunk, Payload: &sdk.ChunkData{MessageID: "m1", Text: "Three "}},
		{Type: sdk.EventChunk, Payload: &sdk.ChunkData{MessageID: "m1", Text: "invoices."}},
		{Type: sdk.EventAgentSummary, Payload: &sdk.AgentSummaryData{Reason: "completed", CostCHF: "0.14", Model: "backup"}},
		{Type: sdk.EventMessage, Payload: &sdk.Message{ID: "m1", Role: "assistant", Content: "Three invoices."}},
	} {
		a.Apply(ev)
	}
	fmt.Printf("%q done=%v model=%s cost=%s CHF\n", a.Text, a.Done, a.Model, a.Cost)
	// Output:
	// "Three invoices." done=true model=backup cost=0.14 CHF
}

// Costs are decimal strings added exactly, as the server bills them.
func ExampleCHF_Add() {
	fmt.Println(sdk.CHF("0.1").Add("0.2"), sdk.CHF("0.000000001").Add("1"))
	// Output:
	// 0.30 1.000000001
}

// Which events end a workflow's stream.
func ExampleEventType_Terminal() {
	for _, t := range []sdk.EventType{sdk.EventChunk, sdk.EventComplete, sdk.EventStopped, sdk.EventError} {
		fmt.Println(t, t.Terminal())
	}
	// Output:
	// chunk false
	// complete true
	// stopped true
	// error true
}
