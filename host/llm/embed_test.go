package llm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

func TestEmbed(t *testing.T) {
	texts := []string{
		"Invoices are due within 30 days.",
		"The office is in Zürich.",
		"Revenue grew 4% in Q3.",
		"Payment terms: 30 days net.",
		"Contact: finance@example.com",
		"The board meets quarterly.",
		"A long text " + strings.Repeat("about nothing in particular ", 40),
	}
	tests := []struct {
		name        string
		batch       llm.EmbeddingConfig
		dimensions  int
		script      []llmtest.Step
		wantBatches []int // texts per request, in order
		wantDim     int
	}{
		{name: "batches by count", batch: llm.EmbeddingConfig{BatchSize: 3}, wantBatches: []int{3, 3, 1}, wantDim: 16},
		{name: "batches by tokens; a long text goes alone", batch: llm.EmbeddingConfig{BatchSize: 100, BatchTokens: 30},
			wantBatches: []int{3, 3, 1}, wantDim: 16},
		{name: "one batch, asked dimensions", batch: llm.EmbeddingConfig{BatchSize: 100}, dimensions: 8, wantBatches: []int{7}, wantDim: 8},
		{name: "a failing batch is retried", batch: llm.EmbeddingConfig{BatchSize: 4},
			script: []llmtest.Step{llmtest.Fail(500, "oops")}, wantBatches: []int{4, 3}, wantDim: 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.ScriptEndpoint(llmtest.EndpointEmbeddings, tc.script...)
			m := &meter{}
			c, err := llm.New(llm.Config{
				Providers: []llm.ProviderConfig{{Name: "p", BaseURL: srv.URL()}},
				Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpEmbedding: {
					{Provider: "p", Model: "text-embedding-3-small", Dimensions: tc.dimensions}}},
				Embedding: tc.batch,
				Retry:     fastRetry,
			}, m, nil)
			if err != nil {
				t.Fatal(err)
			}
			vecs, u, err := c.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vecs {
				if want := llmtest.Vector(texts[i], tc.wantDim); !slices.Equal(v, want) {
					t.Fatalf("vector %d is not text %d's", i, i)
				}
			}
			var sizes []int
			for _, r := range srv.Requests() {
				if r.Status == 200 {
					sizes = append(sizes, len(r.Embedding.Input))
					if r.Embedding.Dimensions != tc.dimensions || r.Embedding.Model != "text-embedding-3-small" {
						t.Errorf("request %+v", r.Embedding)
					}
				}
			}
			if !slices.Equal(sizes, tc.wantBatches) {
				t.Errorf("batches %v, want %v", sizes, tc.wantBatches)
			}
			recs := m.records()
			if len(recs) != len(tc.wantBatches) {
				t.Fatalf("meter got %d records, want one per batch (%d)", len(recs), len(tc.wantBatches))
			}
			var sum modeluse.Usage
			for _, r := range recs {
				sum = sum.Add(r.usage)
			}
			// text-embedding-3-small's built-in price: 0.016 CHF per 1M tokens.
			if u.PromptTokens != sum.PromptTokens || u.PromptTokens == 0 || u.Cost != money.Amount(u.PromptTokens*16) ||
				u.Operation != modeluse.OpEmbedding || u.Model != "text-embedding-3-small" || u.Estimated {
				t.Errorf("usage %+v, meter sum %+v", u, sum)
			}
		})
	}
}

func TestEmbedRefusesEmptyText(t *testing.T) {
	srv := llmtest.New(t)
	c, err := llm.New(llm.Config{
		Providers: []llm.ProviderConfig{{Name: "p", BaseURL: srv.URL()}},
		Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpEmbedding: {{Provider: "p", Model: "e"}}},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Embed(context.Background(), []string{"fine", "  "}); !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), "text 1") {
		t.Errorf("err = %v", err)
	}
	if vecs, _, err := c.Embed(context.Background(), nil); err != nil || vecs != nil {
		t.Errorf("no texts: %v %v", vecs, err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// wav is a PCM WAV file of the given length (16 kHz, 16-bit mono).
func wav(seconds float64) []byte {
	n := int(seconds * 16000)
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*n))
	b.WriteString("WAVEfmt ")
	le(uint32(16))
	le(uint16(1))
	le(uint16(1))
	le(uint32(16000))
	le(uint32(32000))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("data")
	le(uint32(2 * n))
	b.Write(make([]byte, 2*n))
	return b.Bytes()
}

func TestTranscribe(t *testing.T) {
	tests := []struct {
		name          string
		model         string
		filename      string
		wantFormat    string
		wantFilename  string
		wantEstimated bool
	}{
		{name: "whisper reports the duration", model: "whisper-1", wantFormat: "verbose_json", wantFilename: "audio.wav"},
		{name: "gpt-4o-transcribe does not: measured from the WAV", model: "gpt-4o-mini-transcribe", filename: "memo.wav",
			wantFormat: "json", wantFilename: "memo.wav", wantEstimated: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, llmtest.WithTranscript("Bitte die Rechnung prüfen."))
			srv.ScriptEndpoint(llmtest.EndpointTranscriptions, llmtest.Fail(503, "busy"))
			m := &meter{}
			c, err := llm.New(llm.Config{
				Providers:     []llm.ProviderConfig{{Name: "p", BaseURL: srv.URL()}},
				Models:        map[modeluse.Operation][]llm.ModelConfig{modeluse.OpTranscription: {{Provider: "p", Model: tc.model, CHFPerMinute: 0.006}}},
				Transcription: llm.TranscriptionConfig{Language: "de"},
				Retry:         fastRetry,
			}, m, nil)
			if err != nil {
				t.Fatal(err)
			}
			audio := wav(90)
			text, u, err := c.Transcribe(context.Background(), bytes.NewReader(audio), tc.filename)
			if err != nil {
				t.Fatal(err)
			}
			if text != "Bitte die Rechnung prüfen." {
				t.Errorf("text %q", text)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want a retry after the 503", len(reqs))
			}
			r := reqs[1].Transcription
			if !bytes.Equal(r.Audio, audio) || r.Filename != tc.wantFilename || r.ResponseFormat != tc.wantFormat || r.Language != "de" || r.Model != tc.model {
				t.Errorf("request: file %q (%d bytes), format %q, language %q", r.Filename, len(r.Audio), r.ResponseFormat, r.Language)
			}
			if math.Abs(u.AudioSeconds-90) > 0.01 || u.Cost != money.FromCHF(1.5*0.006) || u.Estimated != tc.wantEstimated || u.Attempts != 2 {
				t.Errorf("usage %+v", u)
			}
			if recs := m.records(); len(recs) != 1 || recs[0].usage != u {
				t.Errorf("meter got %+v", recs)
			}
		})
	}
}

func TestTranscribeRefusesOversizeAudio(t *testing.T) {
	srv := llmtest.New(t)
	c, err := llm.New(llm.Config{
		Providers:     []llm.ProviderConfig{{Name: "p", BaseURL: srv.URL()}},
		Models:        map[modeluse.Operation][]llm.ModelConfig{modeluse.OpTranscription: {{Provider: "p", Model: "whisper-1"}}},
		Transcription: llm.TranscriptionConfig{MaxBytes: 1000},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Transcribe(context.Background(), bytes.NewReader(wav(1)), ""); !errors.Is(err, llm.ErrInvalidRequest) {
		t.Errorf("err = %v", err)
	}
	if len(srv.Requests()) != 0 {
		t.Error("oversize audio was sent")
	}
}

func TestSpeak(t *testing.T) {
	tests := []struct {
		name, voice, format string
		wantVoice, wantMIME string
		wantPrefix          string
	}{
		{name: "defaults", wantVoice: "alloy", wantMIME: "audio/mpeg", wantPrefix: "ID3"},
		{name: "voice and wav", voice: "nova", format: "wav", wantVoice: "nova", wantMIME: "audio/wav", wantPrefix: "RIFF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			m := &meter{}
			c, err := llm.New(llm.Config{
				Providers: []llm.ProviderConfig{{Name: "p", BaseURL: srv.URL(), Timeout: 5 * time.Second}},
				Models:    map[modeluse.Operation][]llm.ModelConfig{modeluse.OpSpeech: {{Provider: "p", Model: "tts-1"}}},
				Speech:    llm.SpeechConfig{Format: tc.format},
			}, m, nil)
			if err != nil {
				t.Fatal(err)
			}
			text := "Grüezi mitenand"
			audio, mime, u, err := c.Speak(context.Background(), text, tc.voice)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(audio, []byte(tc.wantPrefix)) || mime != tc.wantMIME {
				t.Errorf("audio %q… as %s", audio[:4], mime)
			}
			r := srv.Requests()[0].Speech
			if r.Voice != tc.wantVoice || r.Input != text || r.Model != "tts-1" {
				t.Errorf("request %+v", r)
			}
			// 15 characters at tts-1's built-in 12 CHF per million.
			if u.Characters != 15 || u.Cost != money.Amount(15*12000) || u.Operation != modeluse.OpSpeech {
				t.Errorf("usage %+v", u)
			}
			if recs := m.records(); len(recs) != 1 {
				t.Errorf("meter got %d records", len(recs))
			}
		})
	}
}
