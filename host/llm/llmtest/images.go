package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"time"
)

// ImageRequest is a decoded /v1/images/generations body.
type ImageRequest struct {
	Model          string
	Prompt         string
	N              int
	Size           string
	ResponseFormat string
	Quality        string
}

// maxImageSide bounds the pictures the server draws.
const maxImageSide = 4096

// handleImages answers /v1/images/generations as OpenAI's API reference
// describes: {"created", "data":[{"b64_json"|"url", "revised_prompt"}],
// "usage"?}. It draws a PNG of the asked size whose colours come from the
// prompt (so different prompts give different pictures); gpt-image-* models
// always answer in base64 and reject response_format, as the real API does,
// and they report token usage. A step's Image, when set, is returned as is.
func (s *Server) handleImages(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var body struct {
		Model          string `json:"model"`
		Prompt         string `json:"prompt"`
		N              int    `json:"n"`
		Size           string `json:"size"`
		ResponseFormat string `json:"response_format"`
		Quality        string `json:"quality"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.writeError(w, Fail(http.StatusBadRequest, "We could not parse the JSON body of your request."))
		return
	}
	req := ImageRequest(body)
	setStatus := s.record(Request{Endpoint: EndpointImages, Header: r.Header.Clone(), Image: &req})
	n := max(req.N, 1)
	gptImage := len(req.Model) >= 9 && req.Model[:9] == "gpt-image"
	width, height := 1024, 1024
	if req.Size != "" && req.Size != "auto" {
		if _, err := fmt.Sscanf(req.Size, "%dx%d", &width, &height); err != nil || width < 1 || height < 1 || width > maxImageSide || height > maxImageSide {
			setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "Invalid size "+req.Size), "size")))
			return
		}
	}
	switch {
	case req.Prompt == "":
		setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "'prompt' is required"), "prompt")))
		return
	case n > 10:
		setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "'n' must be at most 10"), "n")))
		return
	case gptImage && req.ResponseFormat != "":
		setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "Unknown parameter: 'response_format'."), "response_format")))
		return
	case req.ResponseFormat != "" && req.ResponseFormat != "b64_json" && req.ResponseFormat != "url":
		setStatus(s.writeError(w, withParam(Fail(http.StatusBadRequest, "'response_format' must be url or b64_json"), "response_format")))
		return
	}
	step, ok := s.serveSimple(w, r, EndpointImages, setStatus)
	if !ok {
		return
	}
	type item struct {
		B64JSON       string `json:"b64_json,omitempty"`
		URL           string `json:"url,omitempty"`
		RevisedPrompt string `json:"revised_prompt,omitempty"`
	}
	out := struct {
		Created int64  `json:"created"`
		Data    []item `json:"data"`
		Usage   *struct {
			TotalTokens  int `json:"total_tokens"`
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage,omitempty"`
	}{Created: time.Now().Unix()}
	for i := range n {
		pic := step.Image
		if pic == nil {
			pic = drawImage(fmt.Sprintf("%s#%d", req.Prompt, i), width, height)
		}
		if !gptImage && req.ResponseFormat != "b64_json" {
			// URLs are not served here: clients of this server ask for base64.
			out.Data = append(out.Data, item{URL: s.srv.URL + "/images/unavailable.png", RevisedPrompt: req.Prompt})
			continue
		}
		out.Data = append(out.Data, item{B64JSON: base64.StdEncoding.EncodeToString(pic), RevisedPrompt: req.Prompt})
	}
	if gptImage && !step.NoUsage && !s.opts.noUsage {
		in := estimateTokens(req.Prompt)
		outTok := 272 * n // OpenAI's figure for a low-quality square image
		out.Usage = &struct {
			TotalTokens  int `json:"total_tokens"`
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}{in + outTok, in, outTok}
	}
	writeJSON(w, http.StatusOK, out)
	setStatus(http.StatusOK)
}

// drawImage is a deterministic PNG for seed: a diagonal gradient between two
// colours taken from the seed's SHA-256.
func drawImage(seed string, width, height int) []byte {
	h := sha256.Sum256([]byte(seed))
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	for y := range height {
		for x := range width {
			t := float64(x+y) / float64(width+height)
			mix := func(a, b byte) uint8 { return uint8(float64(a)*(1-t) + float64(b)*t) }
			img.SetNRGBA(x, y, color.NRGBA{mix(h[0], h[3]), mix(h[1], h[4]), mix(h[2], h[5]), 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}
