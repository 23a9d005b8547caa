// Package model asks the workspace's language model (capability "model";
// declare it in plugin.json). Calls are billed to the user running the tool
// and count in their workflow's budget.
package model

import "github.com/agenthost/agenthost/pdk"

// Info describes the model completions use.
type Info struct {
	Model string `json:"model"`
	// ContextTokens is the model's whole context window; a request's
	// messages plus its MaxTokens must fit in it.
	ContextTokens int `json:"contextTokens"`
	// MaxOutputTokens is the most one completion may ask for.
	MaxOutputTokens int `json:"maxOutputTokens"`
}

// GetInfo returns the model's figures.
func GetInfo() (Info, error) {
	var i Info
	err := pdk.Invoke(info, struct{}{}, &i)
	return i, err
}

// Count returns how many tokens text takes for the model.
func Count(text string) (int, error) {
	var r struct {
		Tokens int `json:"tokens"`
	}
	err := pdk.Invoke(count, struct {
		Text string `json:"text"`
	}{text}, &r)
	return r.Tokens, err
}

// Message is one chat message: role system, user or assistant.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one completion. MaxTokens 0 takes Info.MaxOutputTokens;
// Purpose labels the call in the usage records ("map", "reduce").
type Request struct {
	Messages  []Message `json:"messages"`
	MaxTokens int       `json:"maxTokens,omitempty"`
	Purpose   string    `json:"purpose,omitempty"`
}

// Response is a finished completion and what it cost.
type Response struct {
	Content          string  `json:"content"`
	FinishReason     string  `json:"finishReason"`
	PromptTokens     int     `json:"promptTokens"`
	CompletionTokens int     `json:"completionTokens"`
	CostCHF          float64 `json:"costCHF"`
	Model            string  `json:"model"`
}

// Complete asks the model. A request that does not fit the context fails
// with code "context_exceeded" before anything is spent.
func Complete(r Request) (Response, error) {
	var resp Response
	err := pdk.Invoke(complete, r, &resp)
	return resp, err
}

// Image is a picture given to the OCR model: PNG, JPEG, WEBP or GIF bytes
// (the types OpenAI-compatible vision endpoints take).
type Image struct {
	MIMEType string `json:"mimeType"`
	Data     []byte `json:"data"`
	// Detail is "low", "high" or "" (the provider's default).
	Detail string `json:"detail,omitempty"`
}

// OCRRequest asks the OCR model to read images. Prompt "" takes the host's
// transcription prompt.
type OCRRequest struct {
	Images    []Image `json:"images"`
	Prompt    string  `json:"prompt,omitempty"`
	MaxTokens int     `json:"maxTokens,omitempty"`
	Purpose   string  `json:"purpose,omitempty"`
}

// OCRResponse is the text the OCR model read and what it cost.
type OCRResponse struct {
	Text             string  `json:"text"`
	FinishReason     string  `json:"finishReason"`
	PromptTokens     int     `json:"promptTokens"`
	CompletionTokens int     `json:"completionTokens"`
	CostCHF          float64 `json:"costCHF"`
	Model            string  `json:"model"`
}

// OCR reads the text of images with the workspace's OCR model (operation
// "ocr" of the host's model configuration). Without one it fails with code
// "no_model", whose message says how to configure it.
func OCR(r OCRRequest) (OCRResponse, error) {
	var resp OCRResponse
	err := pdk.Invoke(ocr, r, &resp)
	return resp, err
}
