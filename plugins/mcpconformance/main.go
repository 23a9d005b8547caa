// Plugin mcp-conformance carries the fixtures the MCP conformance suite
// expects of a server under test (npm @modelcontextprotocol/conformance,
// `conformance list --server`): tools returning each content type,
// reporting progress, logging to the client, asking the client's model
// (sampling) and user (elicitation), failing on purpose; resources and
// prompts through the manifest's "mcp" section. It is a fixture, not a tool
// for agents: the host loads it only when the operator enables it.
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/client"
	"github.com/agenthost/agenthost/pdk/progress"
)

func main() {}

// The suite's fixture data: a 1x1 red PNG and a WAV of silence (base64),
// as the conformance suite's example servers carry them
// (github.com/modelcontextprotocol/conformance, MIT licence).
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// None is the arguments of a tool that takes none.
type None struct{}

// SamplingArgs are test_sampling's arguments.
type SamplingArgs struct {
	Prompt string `json:"prompt" description:"The prompt to send to the LLM"`
}

// ElicitationArgs are test_elicitation's arguments.
type ElicitationArgs struct {
	Message string `json:"message" description:"The message to show the user"`
}

// ContactArgs decode json_schema_2020_12_tool's arguments (its schema is
// written by hand: allOf, if/then/else and $defs are beyond struct tags).
type ContactArgs struct {
	Name          string            `json:"name,omitempty"`
	Address       map[string]string `json:"address,omitempty"`
	ContactMethod string            `json:"contactMethod,omitempty"`
	Phone         string            `json:"phone,omitempty"`
	Email         string            `json:"email,omitempty"`
}

// ResourceArgs name the resource to read.
type ResourceArgs struct {
	URI string `json:"uri" description:"the resource's URI" maxLength:"2048"`
}

// PromptArgs name the prompt and its arguments.
type PromptArgs struct {
	Name      string            `json:"name" description:"the prompt's name" maxLength:"128"`
	Arguments map[string]string `json:"arguments,omitempty" description:"the prompt's arguments"`
}

// Content is a contentResult tool's result: MCP content blocks.
type Content struct {
	Content []map[string]any `json:"content"`
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }
func image() map[string]any {
	return map[string]any{"type": "image", "data": pngBase64, "mimeType": "image/png"}
}
func embedded(uri, body string) map[string]any {
	return map[string]any{"type": "resource", "resource": map[string]any{"uri": uri, "mimeType": "text/plain", "text": body}}
}

func init() {
	ro := pdk.ReadOnly()
	pdk.Tool("test_simple_text", "Tests simple text content response", func(None) (string, error) {
		return "This is a simple text response for testing.", nil
	}, ro)
	pdk.Tool("test_image_content", "Tests image content response", func(None) (Content, error) {
		return Content{[]map[string]any{image()}}, nil
	}, ro, pdk.ContentResult())
	pdk.Tool("test_audio_content", "Tests audio content response", func(None) (Content, error) {
		return Content{[]map[string]any{{"type": "audio", "data": wavBase64, "mimeType": "audio/wav"}}}, nil
	}, ro, pdk.ContentResult())
	pdk.Tool("test_embedded_resource", "Tests embedded resource content response", func(None) (Content, error) {
		return Content{[]map[string]any{embedded("test://embedded-resource", "This is an embedded resource")}}, nil
	}, ro, pdk.ContentResult())
	pdk.Tool("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", func(None) (Content, error) {
		return Content{[]map[string]any{text("This is text content"), image(), embedded("test://embedded-in-multiple", "This is an embedded resource")}}, nil
	}, ro, pdk.ContentResult())
	pdk.Tool("test_tool_with_logging", "Tests tool that emits log messages during execution", func(None) (string, error) {
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if err := client.Log("info", m); err != nil {
				return "", err
			}
		}
		return "Tool with logging executed successfully", nil
	}, ro)
	pdk.Tool("test_tool_with_progress", "Tests tool that reports progress notifications", func(None) (string, error) {
		for i, f := range []float64{0, 0.5, 1} {
			if err := progress.Report(f, fmt.Sprintf("Completed step %d of 3", i+1)); err != nil {
				return "", err
			}
			time.Sleep(50 * time.Millisecond)
		}
		return "Progress reported in three steps", nil
	}, ro)
	pdk.Tool("test_error_handling", "Tests error response handling", func(None) (string, error) {
		return "", pdk.Errorf("tool_error", "This tool intentionally returns an error for testing")
	}, ro)
	pdk.Tool("test_sampling", "Tests server-initiated sampling (LLM completion request)", func(a SamplingArgs) (string, error) {
		res, err := client.Sample("prompt", client.SampleRequest{Messages: []client.Message{{Role: "user", Content: client.Text(a.Prompt)}}, MaxTokens: 100})
		if err != nil {
			return "", err
		}
		text := res.Text()
		if text == "" {
			text = "(non-text response)"
		}
		return "LLM response: " + text, nil
	}, ro)
	pdk.Tool("test_elicitation", "Tests server-initiated elicitation (user input request)", func(a ElicitationArgs) (string, error) {
		return elicit(a.Message, map[string]any{"type": "object",
			"properties": map[string]any{"username": map[string]any{"type": "string", "description": "Your preferred username"}},
			"required":   []string{"username"}})
	}, ro)
	pdk.Tool("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", func(None) (string, error) {
		return elicit("Test defaults for primitives", map[string]any{"type": "object", "properties": map[string]any{
			"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
			"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
		}})
	}, ro)
	titled := []map[string]any{{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}}
	pdk.Tool("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", func(None) (string, error) {
		return elicit("Test enum schemas", map[string]any{"type": "object", "properties": map[string]any{
			"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
			"titledSingle":   map[string]any{"type": "string", "oneOf": titled},
			"legacyEnum":     map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
			"untitledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
			"titledMulti": map[string]any{"type": "array", "minItems": 1, "maxItems": 3,
				"items": map[string]any{"type": "string", "anyOf": titled}},
		}})
	}, ro)
	pdk.Tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)",
		func(a ContactArgs) (string, error) {
			b, _ := json.Marshal(a)
			return "JSON Schema 2020-12 tool called with: " + string(b), nil
		}, ro, pdk.InputSchema(json.RawMessage(schema202012)))
	pdk.Tool("test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the stream mid-call and sends the result after the client reconnects.",
		func(None) (string, error) {
			if err := client.Poll(10); err != nil {
				return "", err
			}
			time.Sleep(100 * time.Millisecond)
			return "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.", nil
		}, ro)
	registerRoundTrips(ro)
	pdk.Tool("mcp_read_resource", "Reads one of the conformance fixture resources (test://…) as MCP resource contents.", readResource, ro)
	pdk.Tool("mcp_get_prompt", "Returns one of the conformance fixture prompts as MCP prompt messages.", getPrompt, ro)
}

func elicit(message string, schema map[string]any) (string, error) {
	res, err := client.Elicit("answer", client.ElicitRequest{Message: message, RequestedSchema: schema})
	if err != nil {
		return "", err
	}
	content, _ := json.Marshal(res.Content)
	return fmt.Sprintf("Elicitation result: action=%s, content=%s", res.Action, content), nil
}

const schema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`

// ResourceResult is resources/read's result.
type ResourceResult struct {
	Contents []map[string]any `json:"contents"`
}

func readResource(a ResourceArgs) (ResourceResult, error) {
	one := func(c map[string]any) (ResourceResult, error) {
		c["uri"] = a.URI
		return ResourceResult{[]map[string]any{c}}, nil
	}
	switch a.URI {
	case "test://static-text":
		return one(map[string]any{"mimeType": "text/plain", "text": "This is the content of the static text resource."})
	case "test://static-binary":
		return one(map[string]any{"mimeType": "image/png", "blob": pngBase64})
	case "test://watched-resource":
		return one(map[string]any{"mimeType": "text/plain", "text": "Watched resource content"})
	}
	if id, ok := strings.CutPrefix(a.URI, "test://template/"); ok {
		if id, ok = strings.CutSuffix(id, "/data"); ok && id != "" && !strings.Contains(id, "/") {
			body, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return one(map[string]any{"mimeType": "application/json", "text": string(body)})
		}
	}
	return ResourceResult{}, pdk.Errorf("not_found", "no resource %q", a.URI)
}

// PromptResult is prompts/get's result.
type PromptResult struct {
	Description string           `json:"description"`
	Messages    []map[string]any `json:"messages"`
}

func user(content map[string]any) map[string]any {
	return map[string]any{"role": "user", "content": content}
}

func getPrompt(a PromptArgs) (PromptResult, error) {
	switch a.Name {
	case "test_simple_prompt":
		return PromptResult{"A simple test prompt", []map[string]any{user(text("This is a simple prompt for testing."))}}, nil
	case "test_prompt_with_arguments":
		return PromptResult{"A prompt with arguments", []map[string]any{user(text(
			fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a.Arguments["arg1"], a.Arguments["arg2"])))}}, nil
	case "test_prompt_with_embedded_resource":
		return PromptResult{"A prompt with an embedded resource", []map[string]any{
			user(embedded(a.Arguments["resourceUri"], "Embedded resource content for testing.")),
			user(text("Please process the embedded resource above."))}}, nil
	case "test_input_required_result_prompt":
		res, err := client.Elicit("user_context", client.ElicitRequest{Message: "Please provide context for the prompt",
			RequestedSchema: object("context", "string")})
		if err != nil {
			return PromptResult{}, err
		}
		return PromptResult{"A prompt with elicited context", []map[string]any{user(text(fmt.Sprintf("Context: %v", res.Content["context"])))}}, nil
	case "test_prompt_with_image":
		return PromptResult{"A prompt with an image", []map[string]any{user(image()), user(text("Please analyze the image above."))}}, nil
	}
	return PromptResult{}, pdk.Errorf("not_found", "no prompt %q", a.Name)
}
