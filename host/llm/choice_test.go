package llm_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/llmtest"
	"github.com/agenthost/agenthost/host/llm/modeluse"
	"github.com/agenthost/agenthost/host/money"
)

func choiceChain() map[modeluse.Operation][]llm.ModelConfig {
	return map[modeluse.Operation][]llm.ModelConfig{
		modeluse.OpAgent: {
			{Provider: "a", Model: "m-a", ContextWindow: 32000, InputCHFPer1M: 2, OutputCHFPer1M: 8},
			{Provider: "b", Model: "m-b", ContextWindow: 16000, InputCHFPer1M: 1, OutputCHFPer1M: 4},
			{Provider: "b", Model: "m-vision", ContextWindow: 64000, Images: true, InputCHFPer1M: 2.5, OutputCHFPer1M: 10},
		},
	}
}

// TestChosenModel: the model a conversation chose is the one the scripted
// server is asked for, and the rest of the chain follows it in order on 5xx.
func TestChosenModel(t *testing.T) {
	image := []llm.Message{{Role: llm.RoleUser, Content: "What is on this receipt?",
		Images: []llm.ImageInput{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")}}}}
	tests := []struct {
		name    string
		chosen  string
		msgs    []llm.Message
		script  []llmtest.Step
		want    []string // the models asked, in order
		wantErr error
	}{
		{name: "none chosen: the chain's first", script: []llmtest.Step{llmtest.Reply("ok")}, want: []string{"m-a"}},
		{name: "the second chosen", chosen: "b/m-b", script: []llmtest.Step{llmtest.Reply("ok")}, want: []string{"m-b"}},
		{name: "the chosen fails: the chain after it, first model first", chosen: "b/m-vision",
			// fastRetry: two attempts per model.
			script: []llmtest.Step{llmtest.Fail(http.StatusBadGateway, "upstream"), llmtest.Fail(http.StatusBadGateway, "upstream"),
				llmtest.Reply("ok")},
			want: []string{"m-vision", "m-vision", "m-a"}},
		{name: "images on a vision model", chosen: "b/m-vision", msgs: image, script: []llmtest.Step{llmtest.Reply("a receipt")}, want: []string{"m-vision"}},
		{name: "images on a model that reads none", chosen: "b/m-b", msgs: image, wantErr: llm.ErrModelCapability},
		{name: "not configured", chosen: "a/gpt-9", wantErr: llm.ErrModelNotConfigured},
		{name: "same name, other provider", chosen: "a/m-b", wantErr: llm.ErrModelNotConfigured},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, 5*time.Second, choiceChain())
			s.srv.Script(tc.script...)
			msgs := tc.msgs
			if msgs == nil {
				msgs = userMsg("Hello")
			}
			_, err := s.client.Chat(llm.WithModel(context.Background(), tc.chosen), llm.ChatRequest{Messages: msgs}, nil)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if got := models(s.srv.ChatRequests()); !slices.Equal(got, tc.want) {
				t.Errorf("models asked %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChooseAndModelIn(t *testing.T) {
	s := newSetup(t, 5*time.Second, choiceChain())
	m, err := s.client.Choose(modeluse.OpAgent, "b/m-vision")
	if err != nil || m.ID() != "b/m-vision" || !m.Images || m.ContextWindow != 64000 {
		t.Fatalf("choose: %+v %v", m, err)
	}
	if in, out := m.Price(); in != money.FromCHF(2.5) || out != 10*money.CHF {
		t.Errorf("price %s/%s", in, out)
	}
	if _, err := s.client.Choose(modeluse.OpAgent, "m-vision"); !errors.Is(err, llm.ErrModelNotConfigured) {
		t.Errorf("a bare model name: %v", err)
	}
	if got, _ := s.client.ModelIn(llm.WithModel(context.Background(), "b/m-b"), modeluse.OpAgent); got.ID() != "b/m-b" {
		t.Errorf("ModelIn chosen: %s", got.ID())
	}
	if got, _ := s.client.ModelIn(context.Background(), modeluse.OpAgent); got.ID() != "a/m-a" {
		t.Errorf("ModelIn default: %s", got.ID())
	}
}

func TestImagesOnlyForChat(t *testing.T) {
	cfg := llm.Config{Providers: []llm.ProviderConfig{{Name: "a", BaseURL: "http://localhost:1/v1"}},
		Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpEmbedding: {{Provider: "a", Model: "e", Images: true}},
			modeluse.OpAgent: {{Provider: "a", Model: "x,y"}}}}
	err := cfg.Validate()
	for _, want := range []string{"llm.models.embedding[0].images", "llm.models.agent[0].model"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: %v, want %s", err, want)
		}
	}
}
