package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Endpoint names a path the server answers.
type Endpoint string

// The endpoints, as paths under the server's root.
const (
	EndpointChat           Endpoint = "/v1/chat/completions"
	EndpointEmbeddings     Endpoint = "/v1/embeddings"
	EndpointTranscriptions Endpoint = "/v1/audio/transcriptions"
	EndpointSpeech         Endpoint = "/v1/audio/speech"
	EndpointImages         Endpoint = "/v1/images/generations"
)

// Request is one request the server received, decoded. Exactly one of the
// endpoint fields is set. Status is what the server answered: 0 while the
// answer is under way or when a CutAfter step dropped the connection, 499
// when the client went away first.
type Request struct {
	Endpoint      Endpoint
	Header        http.Header
	Chat          *ChatRequest
	Embedding     *EmbeddingRequest
	Transcription *TranscriptionRequest
	Speech        *SpeechRequest
	Image         *ImageRequest
	Status        int
}

// ChatRequest is a decoded /v1/chat/completions body.
type ChatRequest struct {
	Model               string
	Messages            []Message
	Tools               []Tool
	ToolChoice          json.RawMessage
	Stream              bool
	IncludeUsage        bool // stream_options.include_usage
	MaxTokens           int
	MaxCompletionTokens int
	// Temperature is nil when the client sent none.
	Temperature *float64
	// Raw is the body as received.
	Raw json.RawMessage
}

// Message is one chat message of a request. Content joins the text parts
// when the client sent content as an array; Images are its image_url parts,
// decoded.
type Message struct {
	Role       string
	Content    string
	Images     []Image
	ToolCalls  []ToolCall
	ToolCallID string
	Name       string
}

// Tool is one function offered in a request.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// LastMessage returns the request's last message (zero if none).
func (r ChatRequest) LastMessage() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// LastUser returns the content of the last user message.
func (r ChatRequest) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// ToolResults returns the tool messages after the last assistant message:
// the results the model is now asked to read.
func (r ChatRequest) ToolResults() []Message {
	var out []Message
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role == "tool"; i-- {
		out = append([]Message{r.Messages[i]}, out...)
	}
	return out
}

// HasTool reports whether a function of that name is offered.
func (r ChatRequest) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// EmbeddingRequest is a decoded /v1/embeddings body.
type EmbeddingRequest struct {
	Model          string
	Input          []string
	Dimensions     int
	EncodingFormat string
}

// TranscriptionRequest is a decoded /v1/audio/transcriptions form.
type TranscriptionRequest struct {
	Model          string
	Filename       string
	ContentType    string
	Audio          []byte
	ResponseFormat string
	Language       string
	Prompt         string
}

// SpeechRequest is a decoded /v1/audio/speech body.
type SpeechRequest struct {
	Model          string
	Input          string
	Voice          string
	ResponseFormat string
	Speed          float64
}

// The wire forms, written from OpenAI's API reference rather than taken from
// a client library, so that client and server do not share a mistake.
type (
	wireChatRequest struct {
		Model         string          `json:"model"`
		Messages      []wireMessage   `json:"messages"`
		Tools         []wireTool      `json:"tools"`
		ToolChoice    json.RawMessage `json:"tool_choice"`
		Stream        bool            `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		MaxTokens           int      `json:"max_tokens"`
		MaxCompletionTokens int      `json:"max_completion_tokens"`
		Temperature         *float64 `json:"temperature"`
	}
	wireMessage struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCalls  []wireToolCall  `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
		Name       string          `json:"name"`
	}
	wireToolCall struct {
		Index    *int   `json:"index,omitempty"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
)

func decodeChat(body []byte) (ChatRequest, error) {
	var w wireChatRequest
	if err := json.Unmarshal(body, &w); err != nil {
		//lint:ignore ST1005 the text is OpenAI's own error message, reproduced for fidelity
		return ChatRequest{}, fmt.Errorf("We could not parse the JSON body of your request. (%v)", err)
	}
	if w.Model == "" {
		return ChatRequest{}, fmt.Errorf("you must provide a model parameter")
	}
	if len(w.Messages) == 0 {
		return ChatRequest{}, fmt.Errorf("[] is too short - 'messages'")
	}
	r := ChatRequest{
		Model: w.Model, ToolChoice: w.ToolChoice, Stream: w.Stream,
		MaxTokens: w.MaxTokens, MaxCompletionTokens: w.MaxCompletionTokens,
		Temperature: w.Temperature, Raw: json.RawMessage(body),
	}
	if w.StreamOptions != nil {
		if !w.Stream {
			//lint:ignore ST1005 the text is OpenAI's own error message, reproduced for fidelity
			return ChatRequest{}, fmt.Errorf("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
		}
		r.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	for i, m := range w.Messages {
		content, images, err := decodeContent(m.Content)
		if err != nil {
			return ChatRequest{}, fmt.Errorf("messages[%d].content: %v", i, err)
		}
		if len(images) > 0 && m.Role != "user" {
			//lint:ignore ST1005 the text is OpenAI's own error message, reproduced for fidelity
			return ChatRequest{}, fmt.Errorf("Invalid 'messages[%d]'. Image content parts are only allowed for messages with role 'user'.", i)
		}
		switch m.Role {
		case "system", "developer", "user", "assistant":
		case "tool":
			if m.ToolCallID == "" {
				return ChatRequest{}, fmt.Errorf("messages[%d]: a message with role 'tool' needs 'tool_call_id'", i)
			}
		default:
			return ChatRequest{}, fmt.Errorf("messages[%d].role: '%s' is not one of ['system', 'assistant', 'user', 'tool', 'developer']", i, m.Role)
		}
		msg := Message{Role: m.Role, Content: content, Images: images, ToolCallID: m.ToolCallID, Name: m.Name}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		r.Messages = append(r.Messages, msg)
	}
	for i, t := range w.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return ChatRequest{}, fmt.Errorf("tools[%d]: expected a function with a name", i)
		}
		r.Tools = append(r.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return r, nil
}

// Image is one image_url content part of a user message, decoded from its
// data: URL.
type Image struct {
	MIMEType string
	Data     []byte
	// Detail is "low", "high" or "auto" (the default).
	Detail string
}

// Limits of image inputs, from OpenAI's vision guide ("Images and vision",
// platform.openai.com/docs/guides/images-vision): PNG, JPEG, WEBP and
// non-animated GIF; up to 50 MB of images per request and 500 images.
const (
	maxImagesPerRequest = 500
	maxImageBytes       = 50 << 20
)

// decodeContent accepts content as a string, null, or an array of parts
// ("text", and "image_url" with a base64 data: URL; an http(s) URL is
// refused here, since the scripted server fetches nothing).
func decodeContent(raw json.RawMessage) (string, []Image, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL    string `json:"url"`
			Detail string `json:"detail"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, fmt.Errorf("expected a string or an array of parts")
	}
	var b strings.Builder
	var images []Image
	total := 0
	for i, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return "", nil, fmt.Errorf("[%d]: missing required parameter 'image_url.url'", i)
			}
			im, err := decodeDataURL(p.ImageURL.URL)
			if err != nil {
				return "", nil, fmt.Errorf("[%d].image_url: %v", i, err)
			}
			switch p.ImageURL.Detail {
			case "", "auto", "low", "high":
				im.Detail = p.ImageURL.Detail
			default:
				return "", nil, fmt.Errorf("[%d].image_url.detail: '%s' is not one of ['auto', 'low', 'high']", i, p.ImageURL.Detail)
			}
			total += len(im.Data)
			images = append(images, im)
		default:
			return "", nil, fmt.Errorf("[%d].type: '%s' is not one of ['text', 'image_url']", i, p.Type)
		}
	}
	if len(images) > maxImagesPerRequest {
		return "", nil, fmt.Errorf("too many images: %d (at most %d)", len(images), maxImagesPerRequest)
	}
	if total > maxImageBytes {
		return "", nil, fmt.Errorf("the images take %d bytes (at most %d)", total, maxImageBytes)
	}
	return b.String(), images, nil
}

// decodeDataURL decodes "data:image/png;base64,...": the type must be one
// OpenAI takes and the bytes must be that type.
func decodeDataURL(u string) (Image, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return Image{}, fmt.Errorf("only data: URLs are served by the scripted server, not %.20q", u)
	}
	meta, data, ok := strings.Cut(rest, ",")
	mime, enc, _ := strings.Cut(meta, ";")
	if !ok || enc != "base64" {
		return Image{}, fmt.Errorf("invalid image URL: expected data:<type>;base64,<data>")
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{}, fmt.Errorf("invalid base64 image data: %v", err)
	}
	want := map[string]string{"image/png": "image/png", "image/jpeg": "image/jpeg", "image/webp": "image/webp", "image/gif": "image/gif"}
	if _, ok := want[mime]; !ok {
		return Image{}, fmt.Errorf("invalid MIME type %q: only image/png, image/jpeg, image/webp and image/gif are supported", mime)
	}
	if got := http.DetectContentType(b); got != mime {
		return Image{}, fmt.Errorf("you uploaded an unsupported image. The data is %s, not the declared %s", got, mime)
	}
	return Image{MIMEType: mime, Data: b}, nil
}

// Reply shapes.
type (
	wireError struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	wireChoice struct {
		Index        int             `json:"index"`
		Message      *wireOutMessage `json:"message,omitempty"`
		Delta        *wireDelta      `json:"delta,omitempty"`
		FinishReason *string         `json:"finish_reason"`
		Logprobs     *struct{}       `json:"logprobs"`
	}
	// wireOutMessage is a whole reply message: content is null when the
	// model only calls tools.
	wireOutMessage struct {
		Role      string         `json:"role"`
		Content   *string        `json:"content"`
		Refusal   *string        `json:"refusal"`
		ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
	}
	wireDelta struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
	}
	wireCompletion struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		SystemFingerprint string       `json:"system_fingerprint"`
		Choices           []wireChoice `json:"choices"`
		Usage             *Usage       `json:"usage,omitempty"`
	}
	// wireChunk differs from wireCompletion in that usage is written as
	// null when the client asked for usage and this is not the usage chunk.
	wireChunk struct {
		ID                string          `json:"id"`
		Object            string          `json:"object"`
		Created           int64           `json:"created"`
		Model             string          `json:"model"`
		SystemFingerprint string          `json:"system_fingerprint"`
		Choices           []wireChoice    `json:"choices"`
		Usage             json.RawMessage `json:"usage,omitempty"`
	}
)
