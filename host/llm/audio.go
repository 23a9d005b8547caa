package llm

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

// maxSpeechBytes bounds a speech reply (an hour of mp3 is about 60 MB).
const maxSpeechBytes = 64 << 20

// Transcribe turns audio into text with the transcription chain's model.
//
// The audio is read into memory first (at most Transcription.MaxBytes, 25
// MiB by default, else ErrInvalidRequest) so that a retry or a fallback can
// send it again. filename tells the provider the format by its extension;
// when empty the format is sniffed (wav, mp3, ogg, flac, webm, mp4). The
// cost is CHFPerMinute times the audio's length as the provider reports it
// (verbose_json); models that report none (gpt-4o-transcribe takes only
// json) are measured from a WAV header, and otherwise recorded at 0 seconds,
// both with Usage.Estimated set.
func (c *Client) Transcribe(ctx context.Context, audio io.Reader, filename string) (string, modeluse.Usage, error) {
	chain := c.chain(modeluse.OpTranscription)
	if len(chain) == 0 {
		return "", modeluse.Usage{Operation: modeluse.OpTranscription}, notConfigured(modeluse.OpTranscription)
	}
	limit := c.cfg.Transcription.MaxBytes
	data, err := io.ReadAll(io.LimitReader(audio, limit+1))
	if err != nil {
		return "", modeluse.Usage{Operation: modeluse.OpTranscription}, fmt.Errorf("llm: transcription: reading audio: %w", err)
	}
	if int64(len(data)) > limit {
		return "", modeluse.Usage{Operation: modeluse.OpTranscription}, fmt.Errorf("llm: transcription: %w: audio is larger than %d bytes", ErrInvalidRequest, limit)
	}
	if len(data) == 0 {
		return "", modeluse.Usage{Operation: modeluse.OpTranscription}, fmt.Errorf("llm: transcription: %w: no audio", ErrInvalidRequest)
	}
	if filename == "" {
		filename = "audio" + sniffAudioExt(data)
	}
	// The audio's length is known only from a WAV header before the call.
	secs, _ := wavSeconds(data)
	var most money.Amount
	for _, m := range chain {
		most = max(most, m.audioCost(secs))
	}
	h, err := c.hold(ctx, modeluse.OpTranscription, most)
	if err != nil {
		return "", modeluse.Usage{Operation: modeluse.OpTranscription}, err
	}
	defer h.Release(ctx)
	start := time.Now()
	var resp openai.AudioResponse
	used, attempts, err := c.run(ctx, modeluse.OpTranscription, chain, func(a *attempt, m *model) (bool, error) {
		format := openai.AudioResponseFormatVerboseJSON
		if strings.Contains(m.Model, "gpt-4o") {
			format = openai.AudioResponseFormatJSON // these models refuse verbose_json
		}
		r, err := m.p.api.CreateTranscription(a.ctx, openai.AudioRequest{
			Model: m.Model, FilePath: filename, Reader: bytes.NewReader(data),
			Format: format, Language: c.cfg.Transcription.Language,
		})
		if err != nil {
			return false, err
		}
		resp = r
		return false, nil
	})
	if err != nil {
		return "", modeluse.Usage{Operation: modeluse.OpTranscription, Attempts: attempts}, err
	}
	u := modeluse.Usage{Operation: modeluse.OpTranscription, Provider: used.p.Name, Model: used.Model, Attempts: attempts,
		Duration: time.Since(start), AudioSeconds: resp.Duration}
	if u.AudioSeconds <= 0 {
		u.AudioSeconds, _ = wavSeconds(data)
		u.Estimated = true
	}
	u.Cost = used.audioCost(u.AudioSeconds)
	text := strings.TrimSpace(resp.Text)
	return text, u, c.record(ctx, h, u)
}

// Speak turns text into audio with the speech chain's model. voice empty
// takes Speech.Voice; the format is Speech.Format. It returns the audio, its
// MIME type (the provider's Content-Type, else the format's) and the usage,
// priced per character (rune) at CHFPer1MChars.
func (c *Client) Speak(ctx context.Context, text, voice string) ([]byte, string, modeluse.Usage, error) {
	chain := c.chain(modeluse.OpSpeech)
	if len(chain) == 0 {
		return nil, "", modeluse.Usage{Operation: modeluse.OpSpeech}, notConfigured(modeluse.OpSpeech)
	}
	if strings.TrimSpace(text) == "" {
		return nil, "", modeluse.Usage{Operation: modeluse.OpSpeech}, fmt.Errorf("llm: speech: %w: no text", ErrInvalidRequest)
	}
	if voice == "" {
		voice = c.cfg.Speech.Voice
	}
	format := c.cfg.Speech.Format
	chars := int64(utf8.RuneCountInString(text))
	var most money.Amount
	for _, m := range chain {
		most = max(most, money.PerMillion(chars, money.FromCHF(m.CHFPer1MChars)))
	}
	h, err := c.hold(ctx, modeluse.OpSpeech, most)
	if err != nil {
		return nil, "", modeluse.Usage{Operation: modeluse.OpSpeech}, err
	}
	defer h.Release(ctx)
	start := time.Now()
	var audio []byte
	var mimeType string
	used, attempts, err := c.run(ctx, modeluse.OpSpeech, chain, func(a *attempt, m *model) (bool, error) {
		raw, err := m.p.api.CreateSpeech(a.ctx, openai.CreateSpeechRequest{
			Model: openai.SpeechModel(m.Model), Input: text, Voice: openai.SpeechVoice(voice),
			ResponseFormat: openai.SpeechResponseFormat(format),
		})
		if err != nil {
			return false, err
		}
		defer raw.Close()
		b, err := io.ReadAll(io.LimitReader(raw, maxSpeechBytes+1))
		if err != nil {
			return false, err
		}
		if len(b) > maxSpeechBytes {
			return false, fmt.Errorf("audio larger than %d bytes", maxSpeechBytes)
		}
		if len(b) == 0 {
			return false, errors.New("empty audio")
		}
		audio = b
		mimeType = speechFormats[format]
		if mt, _, err := mime.ParseMediaType(raw.Header().Get("Content-Type")); err == nil && strings.HasPrefix(mt, "audio/") {
			mimeType = mt
		}
		return false, nil
	})
	if err != nil {
		return nil, "", modeluse.Usage{Operation: modeluse.OpSpeech, Attempts: attempts}, err
	}
	u := modeluse.Usage{Operation: modeluse.OpSpeech, Provider: used.p.Name, Model: used.Model, Attempts: attempts,
		Duration: time.Since(start), Characters: utf8.RuneCountInString(text)}
	u.Cost = money.PerMillion(int64(u.Characters), money.FromCHF(used.CHFPer1MChars))
	return audio, mimeType, u, c.record(ctx, h, u)
}

// sniffAudioExt names the container of data by its magic bytes, so that a
// provider that goes by the file name accepts it.
func sniffAudioExt(data []byte) string {
	switch {
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return ".wav"
	case len(data) >= 4 && string(data[:4]) == "fLaC":
		return ".flac"
	case len(data) >= 4 && string(data[:4]) == "OggS":
		return ".ogg"
	case len(data) >= 4 && string(data[:4]) == "\x1a\x45\xdf\xa3":
		return ".webm"
	case len(data) >= 8 && string(data[4:8]) == "ftyp":
		return ".mp4"
	}
	switch http.DetectContentType(data) {
	case "audio/mpeg":
		return ".mp3"
	case "audio/wave":
		return ".wav"
	}
	return ".mp3" // most common; the provider reports a mismatch clearly
}

// wavSeconds reads a PCM WAV header: the data chunk's size over the byte
// rate. False when data is not a WAV file it understands.
func wavSeconds(data []byte) (float64, bool) {
	if len(data) < 12 || string(data[:4]) != "RIFF" || string(data[8:12]) != "WAVE" {
		return 0, false
	}
	var byteRate uint32
	for p := 12; p+8 <= len(data); {
		id, size := string(data[p:p+4]), binary.LittleEndian.Uint32(data[p+4:p+8])
		body := p + 8
		switch id {
		case "fmt ":
			if body+12 <= len(data) {
				byteRate = binary.LittleEndian.Uint32(data[body+8 : body+12])
			}
		case "data":
			if byteRate == 0 {
				return 0, false
			}
			n := min(int64(size), int64(len(data)-body))
			return float64(n) / float64(byteRate), true
		}
		p = body + int(size) + int(size&1)
	}
	return 0, false
}
