package llm_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/llm/modeluse"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const fileYAML = `
server:            # another part of agenthost: not ours, ignored
  addr: 127.0.0.1:8080
llm:
  providers:
    - name: openai
      apiKeyEnv: OPENAI_KEY
      timeout: 60s
    - name: local
      baseURL: http://localhost:11434/v1
      timeout: 300
  models:
    agent:
      - provider: openai
        model: gpt-4.1
        inputCHFPer1M: 1.5
        outputCHFPer1M: 6
      - provider: local
        model: llama3.1:8b
        contextWindow: 131072
        functionCalling: false
        free: true
    embedding:
      - provider: openai
        model: text-embedding-3-small
        dimensions: 512
  retry:
    attempts: 4
    baseDelay: 250ms
  embedding:
    batchSize: 32
`

const fileJSON = `{
	"llm": {
		"providers": [
			{"name": "openai", "apiKeyEnv": "OPENAI_KEY", "timeout": "60s"},
			{"name": "local", "baseURL": "http://localhost:11434/v1", "timeout": 300}
		],
		"models": {
			"agent": [
				{"provider": "openai", "model": "gpt-4.1", "inputCHFPer1M": 1.5, "outputCHFPer1M": 6},
				{"provider": "local", "model": "llama3.1:8b", "contextWindow": 131072, "functionCalling": false, "free": true}
			],
			"embedding": [{"provider": "openai", "model": "text-embedding-3-small", "dimensions": 512}]
		},
		"retry": {"attempts": 4, "baseDelay": "250ms"},
		"embedding": {"batchSize": 32}
	}
}`

func TestLoadConfigFile(t *testing.T) {
	for _, f := range []struct{ name, content string }{{"agenthost.yaml", fileYAML}, {"agenthost.json", fileJSON}} {
		t.Run(f.name, func(t *testing.T) {
			cfg, err := llm.LoadConfig(writeFile(t, f.name, f.content), envMap(map[string]string{"OPENAI_KEY": "sk-file"}))
			if err != nil {
				t.Fatal(err)
			}
			openai, local := cfg.Providers[0], cfg.Providers[1]
			if openai.BaseURL != llm.DefaultOpenAIBaseURL || openai.APIKey != "sk-file" || openai.Timeout != time.Minute {
				t.Errorf("openai provider %+v", openai)
			}
			if local.APIKey != "" || local.Timeout != 300*time.Second {
				t.Errorf("local provider %+v", local)
			}
			agent := cfg.Models[modeluse.OpAgent]
			if len(agent) != 2 || agent[0].InputCHFPer1M != 1.5 || agent[0].ContextWindow != 1_047_576 || agent[0].NoFunctionCalling {
				t.Errorf("agent chain %+v", agent)
			}
			if l := agent[1]; !l.NoFunctionCalling || !l.Free || l.ContextWindow != 131072 || l.InputCHFPer1M != 0 {
				t.Errorf("local model %+v", l)
			}
			if e := cfg.Models[modeluse.OpEmbedding][0]; e.Dimensions != 512 || e.InputCHFPer1M != 0.016 {
				t.Errorf("embedding model %+v", e)
			}
			if cfg.Retry.Attempts != 4 || cfg.Retry.BaseDelay != 250*time.Millisecond || cfg.Retry.MaxDelay != llm.DefaultMaxDelay {
				t.Errorf("retry %+v", cfg.Retry)
			}
			if cfg.Embedding.BatchSize != 32 || cfg.Embedding.BatchTokens != llm.DefaultEmbedBatchTokens || cfg.Speech.Voice != "alloy" {
				t.Errorf("embedding %+v speech %+v", cfg.Embedding, cfg.Speech)
			}
		})
	}
}

func TestLoadConfigEnvOverridesFile(t *testing.T) {
	path := writeFile(t, "agenthost.yaml", fileYAML)
	cfg, err := llm.LoadConfig(path, envMap(map[string]string{
		"OPENAI_KEY":                               "sk-file",
		"AGENTHOST_OPENAI_API_KEY":                 "sk-env",
		"AGENTHOST_OPENAI_BASE_URL":                "https://gateway.example.com/v1",
		"AGENTHOST_LOCAL_TIMEOUT":                  "5s",
		"AGENTHOST_MODEL_AGENT":                    "llama3.1:8b@local, gpt-4.1",
		"AGENTHOST_MODEL_SUMMARY":                  "gpt-4o-mini",
		"AGENTHOST_MODEL_SUMMARY_FUNCTION_CALLING": "false",
		"AGENTHOST_MODEL_EMBEDDING":                "none",
		"AGENTHOST_EMBEDDING_BATCH_SIZE":           "8",
		"AGENTHOST_SPEECH_VOICE":                   "nova",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Providers[0]; p.APIKey != "sk-env" || p.BaseURL != "https://gateway.example.com/v1" {
		t.Errorf("openai provider %+v", p)
	}
	if p := cfg.Providers[1]; p.Timeout != 5*time.Second {
		t.Errorf("local provider %+v", p)
	}
	agent := cfg.Models[modeluse.OpAgent]
	// The chain is the environment's order, each model keeping the file's settings.
	if len(agent) != 2 || agent[0].Model != "llama3.1:8b" || !agent[0].Free || agent[0].ContextWindow != 131072 ||
		agent[1].Model != "gpt-4.1" || agent[1].InputCHFPer1M != 1.5 {
		t.Errorf("agent chain %+v", agent)
	}
	// A model the file does not know takes the built-in table.
	if s := cfg.Models[modeluse.OpSummary]; len(s) != 1 || s[0].Provider != "openai" || s[0].InputCHFPer1M != 0.12 || s[0].ContextWindow != 128_000 || !s[0].NoFunctionCalling {
		t.Errorf("summary chain %+v", s)
	}
	if _, ok := cfg.Models[modeluse.OpEmbedding]; ok {
		t.Errorf("embedding chain not removed: %+v", cfg.Models[modeluse.OpEmbedding])
	}
	if cfg.Embedding.BatchSize != 8 || cfg.Speech.Voice != "nova" {
		t.Errorf("embedding %+v speech %+v", cfg.Embedding, cfg.Speech)
	}
}

func TestLoadConfigEnvOnly(t *testing.T) {
	cfg, err := llm.LoadConfig("", envMap(map[string]string{
		"AGENTHOST_OPENAI_API_KEY":  "sk-env",
		"AGENTHOST_MODEL_AGENT":     "gpt-4o-2024-08-06,gpt-4o-mini",
		"AGENTHOST_MODEL_EMBEDDING": "text-embedding-3-small",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Providers) != 1 || cfg.Providers[0].Name != "openai" || cfg.Providers[0].BaseURL != llm.DefaultOpenAIBaseURL || cfg.Providers[0].Timeout != llm.DefaultTimeout {
		t.Errorf("providers %+v", cfg.Providers)
	}
	if a := cfg.Models[modeluse.OpAgent]; len(a) != 2 || a[0].InputCHFPer1M != 2.00 || a[0].OutputCHFPer1M != 8.00 || a[1].InputCHFPer1M != 0.12 {
		t.Errorf("agent chain %+v", a)
	}
	c, err := llm.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info, ok := c.Model(modeluse.OpAgent); !ok || info.Name != "gpt-4o-2024-08-06" || info.ContextWindow != 128_000 || !info.FunctionCalling || info.Provider != "openai" {
		t.Errorf("Model(agent) = %+v, %v", info, ok)
	}
	if c.Configured(modeluse.OpSpeech) {
		t.Error("speech configured without a model")
	}

	// Nothing at all is a valid, model-less configuration.
	cfg, err = llm.LoadConfig("", nil)
	if err != nil || len(cfg.Models) != 0 {
		t.Fatalf("empty configuration: %+v, %v", cfg, err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name, file string // file "" means none
		ext        string
		env        map[string]string
		want       []string
	}{
		{name: "unknown field", file: "llm:\n  providers:\n    - name: x\n      baseUrl: http://h/v1\n",
			want: []string{"llm.providers[0].baseUrl: unknown field", "baseURL", "line 4"}},
		{name: "not a number", file: "llm:\n  providers: [{name: p, baseURL: 'http://h/v1'}]\n  models:\n    agent:\n      - provider: p\n        model: m\n        inputCHFPer1M: cheap\n",
			want: []string{`llm.models.agent[0].inputCHFPer1M: "cheap" is not a number`}},
		{name: "unknown provider", file: "llm:\n  providers: [{name: p, baseURL: 'http://h/v1'}]\n  models:\n    agent: [{provider: q, model: m}]\n",
			want: []string{`llm.models.agent[0].provider: unknown provider "q" (configured providers: p)`}},
		{name: "unknown operation", file: "llm:\n  providers: [{name: p, baseURL: 'http://h/v1'}]\n  models:\n    chat: [{provider: p, model: m}]\n",
			want: []string{"llm.models.chat: unknown operation (known: agent, summary, embedding, transcription, speech, image, ocr, title)"}},
		{name: "bad duration", file: "llm:\n  providers: [{name: p, baseURL: 'http://h/v1', timeout: soon}]\n",
			want: []string{`llm.providers[0].timeout: "soon" is not a duration`}},
		{name: "bad base URL and missing model", file: "llm:\n  providers: [{name: p, baseURL: 'localhost:8080'}]\n  models:\n    agent: [{provider: p}]\n",
			want: []string{`llm.providers[0].baseURL: "localhost:8080" is not an http(s) URL`, "llm.models.agent[0].model: missing"}},
		{name: "duplicate provider", file: "llm:\n  providers: [{name: p, baseURL: 'http://h/v1'}, {name: p, baseURL: 'http://h/v1'}]\n",
			want: []string{`llm.providers[1].name: provider "p" is defined twice`}},
		{name: "section at the top level", file: "providers: []\n", want: []string{"providers: belongs under llm:"}},
		{name: "key variable unset", file: "llm:\n  providers: [{name: openai, apiKeyEnv: MY_KEY}]\n",
			want: []string{"llm.providers[0].apiKeyEnv: environment variable MY_KEY is not set"}},
		{name: "openai without a key", env: map[string]string{"AGENTHOST_MODEL_AGENT": "gpt-4o"},
			want: []string{"AGENTHOST_OPENAI_API_KEY: missing"}},
		{name: "env chain names an unknown provider", env: map[string]string{"AGENTHOST_OPENAI_BASE_URL": "http://h/v1", "AGENTHOST_MODEL_AGENT": "llama@ollama"},
			want: []string{`AGENTHOST_MODEL_AGENT: provider "ollama" of "llama@ollama" is not configured`}},
		{name: "env bad timeout", env: map[string]string{"AGENTHOST_OPENAI_BASE_URL": "http://h/v1", "AGENTHOST_OPENAI_TIMEOUT": "forever"},
			want: []string{`AGENTHOST_OPENAI_TIMEOUT: "forever" is not a duration`}},
		{name: "env bad function-calling flag", env: map[string]string{"AGENTHOST_OPENAI_BASE_URL": "http://h/v1", "AGENTHOST_MODEL_AGENT": "m", "AGENTHOST_MODEL_AGENT_FUNCTION_CALLING": "nope"},
			want: []string{`AGENTHOST_MODEL_AGENT_FUNCTION_CALLING: "nope" is not true or false`}},
		{name: "embedding fallback to another model", file: "llm:\n  providers: [{name: p, baseURL: 'http://h/v1'}]\n  models:\n    embedding: [{provider: p, model: e1}, {provider: p, model: e2}]\n",
			want: []string{"llm.models.embedding[1].model: an embedding chain may only fall back to the same model"}},
		{name: "bad speech format", file: "llm:\n  speech: {format: ogg}\n", want: []string{`llm.speech.format: unknown format "ogg"`}},
		{name: "invalid JSON", ext: ".json", file: `{"llm": {"providers": [}}`, want: []string{"invalid JSON"}},
		{name: "JSON unknown field", ext: ".json", file: `{"llm": {"retry": {"attempt": 2}}}`, want: []string{"llm.retry.attempt: unknown field"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := ""
			if tc.file != "" {
				path = writeFile(t, "agenthost"+cmpOr(tc.ext, ".yaml"), tc.file)
			}
			_, err := llm.LoadConfig(path, envMap(tc.env))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// The documented example loads as it is.
func TestExampleConfig(t *testing.T) {
	cfg, err := llm.LoadConfig("../../docs/agenthost.example.yaml", envMap(map[string]string{"OPENAI_API_KEY": "sk-example"}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := llm.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range modeluse.Operations() {
		if !c.Configured(op) {
			t.Errorf("%s not configured by the example", op)
		}
	}
	if got := len(c.Chain(modeluse.OpAgent)); got != 3 {
		t.Errorf("agent chain has %d models", got)
	}
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	_, err := llm.New(llm.Config{Models: map[modeluse.Operation][]llm.ModelConfig{modeluse.OpAgent: {{Provider: "nope", Model: "m"}}}}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "llm.models.agent[0].provider") {
		t.Errorf("err = %v", err)
	}
}

func TestNotConfiguredError(t *testing.T) {
	c, err := llm.New(llm.Config{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range modeluse.Operations() {
		if c.Configured(op) {
			t.Errorf("%s configured", op)
		}
		if _, ok := c.Model(op); ok {
			t.Errorf("Model(%s) found", op)
		}
	}
	_, _, _, err = c.Speak(t.Context(), "hi", "")
	if !errors.Is(err, llm.ErrNotConfigured) || !strings.Contains(err.Error(), "AGENTHOST_MODEL_SPEECH") || !strings.Contains(err.Error(), "llm.models.speech") {
		t.Errorf("err = %v", err)
	}
}
