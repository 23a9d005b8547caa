package llm

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// maxImageBytes bounds one generated image (a 4K PNG is about 25 MB).
const maxImageBytes = 32 << 20

// ImageRequest asks the image chain's model for pictures.
type ImageRequest struct {
	Prompt string
	// Size is the provider's "WxH" (e.g. "1024x1024"); empty takes its default.
	Size string
	// N is how many images (0 means 1; at most 4).
	N int
}

// Image is one generated picture.
type Image struct {
	MIMEType string
	Data     []byte
	// RevisedPrompt is the prompt the provider actually drew, when it says.
	RevisedPrompt string
}

// GenerateImage draws pictures with the image chain's model through the
// provider's images API, asking for base64 data (no second download from a
// URL the provider chooses). The usage is priced by the tokens the provider
// reports (gpt-image-*) and otherwise per image (CHFPerImage).
func (c *Client) GenerateImage(ctx context.Context, req ImageRequest) ([]Image, modeluse.Usage, error) {
	chain := c.chain(modeluse.OpImage)
	if len(chain) == 0 {
		return nil, modeluse.Usage{Operation: modeluse.OpImage}, notConfigured(modeluse.OpImage)
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, modeluse.Usage{Operation: modeluse.OpImage}, fmt.Errorf("llm: image: %w: no prompt", ErrInvalidRequest)
	}
	if req.N == 0 {
		req.N = 1
	}
	if req.N < 0 || req.N > 4 {
		return nil, modeluse.Usage{Operation: modeluse.OpImage}, fmt.Errorf("llm: image: %w: n=%d (want 1 to 4)", ErrInvalidRequest, req.N)
	}
	if req.Size != "" && !validImageSize(req.Size) {
		return nil, modeluse.Usage{Operation: modeluse.OpImage}, fmt.Errorf("llm: image: %w: size %q (want WIDTHxHEIGHT, e.g. 1024x1024)", ErrInvalidRequest, req.Size)
	}
	// Priced per image, the call's most is known; priced by tokens, the
	// prompt's part of it.
	var most money.Amount
	for _, m := range chain {
		most = max(most, m.tokenCost(len(req.Prompt)/3+1, 0, 0)+money.Times(int64(req.N), money.FromCHF(m.CHFPerImage)))
	}
	h, err := c.hold(ctx, modeluse.OpImage, most)
	if err != nil {
		return nil, modeluse.Usage{Operation: modeluse.OpImage}, err
	}
	defer h.Release(ctx)
	start := time.Now()
	var images []Image
	var reported openai.ImageResponseUsage
	used, attempts, err := c.run(ctx, modeluse.OpImage, chain, func(a *attempt, m *model) (bool, error) {
		r := openai.ImageRequest{Prompt: req.Prompt, Model: m.Model, N: req.N, Size: req.Size}
		// gpt-image-* always answer in base64 and refuse response_format;
		// the others answer with URLs unless asked.
		if !strings.HasPrefix(m.Model, "gpt-image") {
			r.ResponseFormat = openai.CreateImageResponseFormatB64JSON
		}
		resp, err := m.p.api.CreateImage(a.ctx, r)
		if err != nil {
			return false, err
		}
		images = images[:0]
		for i, d := range resp.Data {
			if d.B64JSON == "" {
				return false, fmt.Errorf("image %d came without base64 data", i)
			}
			if base64.StdEncoding.DecodedLen(len(d.B64JSON)) > maxImageBytes {
				return false, fmt.Errorf("image %d is larger than %d bytes", i, maxImageBytes)
			}
			b, err := base64.StdEncoding.DecodeString(d.B64JSON)
			if err != nil {
				return false, fmt.Errorf("image %d: %w", i, err)
			}
			images = append(images, Image{MIMEType: http.DetectContentType(b), Data: b, RevisedPrompt: d.RevisedPrompt})
		}
		if len(images) == 0 {
			return false, errors.New("the provider returned no image")
		}
		reported = resp.Usage
		return false, nil
	})
	if err != nil {
		return nil, modeluse.Usage{Operation: modeluse.OpImage, Attempts: attempts}, err
	}
	u := modeluse.Usage{Operation: modeluse.OpImage, Provider: used.p.Name, Model: used.Model, Attempts: attempts,
		Duration: time.Since(start), Images: len(images),
		PromptTokens: reported.InputTokens, CompletionTokens: reported.OutputTokens}
	u.Cost = used.tokenCost(u.PromptTokens, 0, u.CompletionTokens) + money.Times(int64(u.Images), money.FromCHF(used.CHFPerImage))
	return images, u, c.record(ctx, h, u)
}

// validImageSize accepts "WxH" with both sides 16..8192.
func validImageSize(s string) bool {
	var w, h int
	if n, err := fmt.Sscanf(s, "%dx%d", &w, &h); err != nil || n != 2 || fmt.Sprintf("%dx%d", w, h) != s {
		return false
	}
	return w >= 16 && h >= 16 && w <= 8192 && h <= 8192
}
