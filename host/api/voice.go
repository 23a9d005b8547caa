package api

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Voice is what the voice routes need of the model layer:
// speech to text and text to speech on the configured chains.
type Voice interface {
	Transcribe(ctx context.Context, audio io.Reader, filename string) (string, modeluse.Usage, error)
	Speak(ctx context.Context, text, voice string) ([]byte, string, modeluse.Usage, error)
}

// maxSpeechText bounds what one synthesize request may ask to be spoken
// (OpenAI's speech endpoint takes 4,096 characters).
const maxSpeechText = 4096

// voiceContext checks the caller may use the workspace and attributes the
// model call to it.
func voiceContext(c *fiber.Ctx, ws Workspaces, purpose string) (context.Context, error) {
	p := principal(c)
	if _, _, err := ws.Levels(c.UserContext(), p, c.Params("ws")); err != nil {
		return nil, err
	}
	return llm.WithAttribution(c.UserContext(), llm.Attribution{TenantID: p.TenantID, WorkspaceID: c.Params("ws"),
		UserID: p.UserID, Purpose: purpose}), nil
}

// handleTranscribe: POST /workspaces/:ws/voice/transcribe with the recorded
// audio as the body (its Content-Type names the format, e.g. audio/webm)
// answers {"text": …}.
func handleTranscribe(v Voice, ws Workspaces) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx, err := voiceContext(c, ws, "voice.transcribe")
		if err != nil {
			return err
		}
		audio := c.Body()
		if len(audio) == 0 {
			return fmt.Errorf("%w: the body must be the recorded audio", tenancy.ErrInvalid)
		}
		// The provider learns the format from the file name's extension;
		// without a known type the model layer sniffs it.
		name := ""
		if mt, _, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType)); err == nil && strings.HasPrefix(mt, "audio/") {
			ext := strings.TrimPrefix(mt, "audio/")
			switch ext {
			case "mpeg":
				ext = "mp3"
			case "x-wav", "wave":
				ext = "wav"
			}
			name = "speech." + ext
		}
		text, _, err := v.Transcribe(ctx, bytes.NewReader(audio), name)
		if err != nil {
			return err
		}
		return c.JSON(fiber.Map{"text": text})
	}
}

// speakRequest is POST /workspaces/:ws/voice/synthesize's body.
type speakRequest struct {
	Text  string `json:"text"`
	Voice string `json:"voice,omitempty"`
}

// handleSynthesize: POST /workspaces/:ws/voice/synthesize {"text"} answers
// the spoken audio.
func handleSynthesize(v Voice, ws Workspaces) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r speakRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		if strings.TrimSpace(r.Text) == "" {
			return fmt.Errorf("%w: text is required", tenancy.ErrInvalid)
		}
		if len([]rune(r.Text)) > maxSpeechText {
			return fmt.Errorf("%w: text has more than %d characters; speak it in parts", tenancy.ErrInvalid, maxSpeechText)
		}
		ctx, err := voiceContext(c, ws, "voice.synthesize")
		if err != nil {
			return err
		}
		audio, mimeType, _, err := v.Speak(ctx, r.Text, r.Voice)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, mimeType)
		c.Set(fiber.HeaderCacheControl, "no-store")
		return c.Send(audio)
	}
}
