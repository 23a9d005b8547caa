package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/client"
)

// object is the flat schema of an elicitation asking for one field.
func object(field, typ string) map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{field: map[string]any{"type": typ}}, "required": []string{field}}
}

// accepted is the field of an accepted answer, or "".
func accepted(res client.ElicitResult, field string) string {
	if res.Action != "accept" {
		return ""
	}
	v, _ := res.Content[field].(string)
	return v
}

// registerRoundTrips registers the fixtures of protocol 2026-07-28's multi
// round-trip requests (SEP-2322) and of its stateless diagnostics
// (SEP-2575). Each asks its questions through pdk/client and returns the
// input-required error until the answers are there; under older
// revisions the same code asks the client directly.
func registerRoundTrips(ro pdk.Option) {
	pdk.Tool("test_input_required_result_elicitation", "Asks the caller's name (multi round-trip elicitation)", func(None) (string, error) {
		res, err := client.Elicit("user_name", client.ElicitRequest{Message: "What is your name?", RequestedSchema: object("name", "string")})
		if err != nil {
			return "", err
		}
		if name := accepted(res, "name"); name != "" {
			return "Hello, " + name + "!", nil
		}
		return "No name given", nil
	}, ro)
	pdk.Tool("test_input_required_result_sampling", "Asks the client's model a question (multi round-trip sampling)", func(None) (string, error) {
		res, err := client.Sample("capital_question", client.SampleRequest{MaxTokens: 100,
			Messages: []client.Message{{Role: "user", Content: client.Text("What is the capital of France?")}}})
		if err != nil {
			return "", err
		}
		return "Sampling response: " + res.Text(), nil
	}, ro)
	pdk.Tool("test_input_required_result_list_roots", "Asks the client for its roots (multi round-trip roots/list)", func(None) (string, error) {
		roots, err := client.Roots("client_roots")
		if err != nil {
			return "", err
		}
		uris := make([]string, len(roots))
		for i, r := range roots {
			uris[i] = r.URI
		}
		return fmt.Sprintf("Client exposed %d root(s): %s", len(roots), strings.Join(uris, ", ")), nil
	}, ro)
	confirm := func(None) (string, error) {
		if _, err := client.Elicit("confirm", client.ElicitRequest{Message: "Please confirm", RequestedSchema: object("ok", "boolean")}); err != nil {
			return "", err
		}
		return "state-ok: requestState received and confirmation accepted", nil
	}
	pdk.Tool("test_input_required_result_request_state", "Asks for a confirmation; the server's signed requestState carries the answers", confirm, ro)
	pdk.Tool("test_input_required_result_tampered_state", "Asks for a confirmation; a tampered requestState is refused", confirm, ro)
	pdk.Tool("test_input_required_result_multiple_inputs", "Asks three questions in one round: elicitation, sampling and roots", func(None) (string, error) {
		name, err1 := client.Elicit("user_name", client.ElicitRequest{Message: "What is your name?", RequestedSchema: object("name", "string")})
		greeting, err2 := client.Sample("greeting", client.SampleRequest{MaxTokens: 50, Messages: []client.Message{{Role: "user", Content: client.Text("Generate a greeting")}}})
		roots, err3 := client.Roots("client_roots")
		if err := errors.Join(err1, err2, err3); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %s — %d root(s) visible", greeting.Text(), accepted(name, "name"), len(roots)), nil
	}, ro)
	pdk.Tool("test_input_required_result_multi_round", "Asks two questions in two rounds, the second after the first is answered", func(None) (string, error) {
		first, err := client.Elicit("step1", client.ElicitRequest{Message: "Step 1: What is your name?", RequestedSchema: object("name", "string")})
		if err != nil {
			return "", err
		}
		second, err := client.Elicit("step2", client.ElicitRequest{Message: "Step 2: What is your favorite color?", RequestedSchema: object("color", "string")})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Multi-round complete: %s likes %s", accepted(first, "name"), accepted(second, "color")), nil
	}, ro)
	pdk.Tool("test_input_required_result_capabilities", "Asks only what the client declared it can answer", func(None) (string, error) {
		var pending []error
		asked := 0
		keep := func(err error) {
			if client.IsMissingCapability(err) {
				return // not declared: not asked
			}
			asked++
			if err != nil {
				pending = append(pending, err)
			}
		}
		_, err := client.Elicit("user_name", client.ElicitRequest{Message: "What is your name?", RequestedSchema: object("name", "string")})
		keep(err)
		_, err = client.Sample("greeting", client.SampleRequest{MaxTokens: 50, Messages: []client.Message{{Role: "user", Content: client.Text("Generate a greeting")}}})
		keep(err)
		_, err = client.Roots("client_roots")
		keep(err)
		if len(pending) > 0 {
			return "", errors.Join(pending...)
		}
		if asked == 0 {
			return "No declared client capability supports an in-band input request", nil
		}
		return "Capability-aware input requests fulfilled", nil
	}, ro)
	pdk.Tool("test_missing_capability", "Needs the client's sampling capability: a client without it is told so", func(None) (string, error) {
		if _, err := client.Sample("probe", client.SampleRequest{MaxTokens: 10, Messages: []client.Message{{Role: "user", Content: client.Text("ping")}}}); err != nil && !client.IsInputRequired(err) {
			return "", err
		}
		return "Client declared the sampling capability; tool executed.", nil
	}, ro)
	pdk.Tool("test_streaming_elicitation", "Returns a plain result: its response stream carries no requests of the server", func(None) (string, error) {
		return "stream observed: result frames only, no top-level requests", nil
	}, ro)
	pdk.Tool("test_logging_tool", "Logs once; the client receives it only when its request asked for a log level", func(None) (string, error) {
		if err := client.Log("info", "test_logging_tool executed"); err != nil {
			return "", err
		}
		return "Log attempted; the server sends it only at the level the request asked for.", nil
	}, ro)
}
