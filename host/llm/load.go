package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agenthost/agenthost/host/llm/modeluse"
)

// LoadConfig reads the model configuration from the `llm:` section of a YAML
// or JSON file (path; "" for none; .json files are read as JSON, anything
// else as YAML) and then applies environment variables through env (nil:
// no environment), which override the file. Defaults are applied to the
// result. Every error names the field or variable at fault; unknown keys in
// the llm section are errors, other top-level sections are left to their
// owners. The variables are listed in docs/configuration.md; in short:
//
//	AGENTHOST_<PROVIDER>_BASE_URL, _API_KEY, _TIMEOUT   per provider (OPENAI always exists)
//	AGENTHOST_MODEL_<OPERATION>=model[@provider],…      a chain (AGENT, SUMMARY, EMBEDDING, TRANSCRIPTION, SPEECH)
//	AGENTHOST_MODEL_<OPERATION>_FUNCTION_CALLING=false  the chain's models lack native tool calls
//	AGENTHOST_EMBEDDING_BATCH_SIZE, AGENTHOST_EMBEDDING_DIMENSIONS, AGENTHOST_TRANSCRIPTION_LANGUAGE,
//	AGENTHOST_SPEECH_VOICE, AGENTHOST_SPEECH_FORMAT, AGENTHOST_LLM_RETRY_ATTEMPTS
func LoadConfig(path string, env func(string) string) (Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	var cfg Config
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Config{}, fmt.Errorf("llm: reading configuration: %w", err)
		}
		if cfg, err = parseConfig(data, strings.EqualFold(filepath.Ext(path), ".json")); err != nil {
			return Config{}, fmt.Errorf("llm: configuration %s:\n%w", path, err)
		}
	}
	return Resolve(cfg, path, env)
}

// ParseSection decodes the file's llm: section (node; nil for none)
// strictly, as LoadConfig does: unknown keys, duplicates and mistyped values
// are errors naming the key (with its line when lines). The result has
// neither the environment nor the defaults applied (Resolve does). It is how
// the server's one parse of the whole file (host/server) takes this section.
func ParseSection(node *yaml.Node, lines bool) (Config, error) {
	if node == nil {
		return Config{}, nil
	}
	return decodeSection(node, lines)
}

// Resolve applies the environment (env; nil: none) and the defaults to a
// configuration read from the file at path ("" for none; named in errors)
// and validates the result.
func Resolve(cfg Config, path string, env func(string) string) (Config, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	envErr := applyEnv(&cfg, env)
	cfg = cfg.withDefaults()
	if err := errors.Join(envErr, cfg.Validate()); err != nil {
		src := "environment"
		if path != "" {
			src = path + " and environment"
		}
		return Config{}, fmt.Errorf("llm: configuration (%s):\n%w", src, err)
	}
	return cfg, nil
}

// The file form. Field names are the keys; decodeNode enforces them.
type (
	fileLLM struct {
		Providers     []fileProvider         `yaml:"providers"`
		Models        map[string][]fileModel `yaml:"models"`
		Retry         fileRetry              `yaml:"retry"`
		Embedding     fileEmbedding          `yaml:"embedding"`
		Transcription fileTranscription      `yaml:"transcription"`
		Speech        fileSpeech             `yaml:"speech"`
	}
	fileProvider struct {
		Name      string   `yaml:"name"`
		BaseURL   string   `yaml:"baseURL"`
		APIKey    string   `yaml:"apiKey"`
		APIKeyEnv string   `yaml:"apiKeyEnv"`
		Timeout   duration `yaml:"timeout"`
	}
	fileModel struct {
		Provider        string  `yaml:"provider"`
		Model           string  `yaml:"model"`
		ContextWindow   int     `yaml:"contextWindow"`
		FunctionCalling *bool   `yaml:"functionCalling"`
		Images          bool    `yaml:"images"`
		InputCHFPer1M   float64 `yaml:"inputCHFPer1M"`
		CachedCHFPer1M  float64 `yaml:"cachedInputCHFPer1M"`
		OutputCHFPer1M  float64 `yaml:"outputCHFPer1M"`
		CHFPerMinute    float64 `yaml:"chfPerMinute"`
		CHFPer1MChars   float64 `yaml:"chfPer1MChars"`
		CHFPerImage     float64 `yaml:"chfPerImage"`
		Free            bool    `yaml:"free"`
		Dimensions      int     `yaml:"dimensions"`
	}
	fileRetry struct {
		Attempts      int      `yaml:"attempts"`
		BaseDelay     duration `yaml:"baseDelay"`
		MaxDelay      duration `yaml:"maxDelay"`
		MaxRetryAfter duration `yaml:"maxRetryAfter"`
	}
	fileEmbedding struct {
		BatchSize   int `yaml:"batchSize"`
		BatchTokens int `yaml:"batchTokens"`
	}
	fileTranscription struct {
		Language string `yaml:"language"`
		MaxBytes int64  `yaml:"maxBytes"`
	}
	fileSpeech struct {
		Voice  string `yaml:"voice"`
		Format string `yaml:"format"`
	}
)

// duration is a time.Duration in a file: "30s", "1m30s" or a number of
// seconds.
type duration time.Duration

var durationType = reflect.TypeFor[duration]()

func parseConfig(data []byte, isJSON bool) (Config, error) {
	lines := !isJSON
	if isJSON {
		// YAML parses JSON, but libyaml refuses tab indentation; re-indenting
		// also reports JSON syntax errors in JSON's own terms.
		var buf bytes.Buffer
		if err := json.Indent(&buf, data, "", "  "); err != nil {
			return Config{}, fmt.Errorf("invalid JSON: %w", err)
		}
		data = buf.Bytes()
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Config{}, err
	}
	if len(doc.Content) == 0 {
		return Config{}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Config{}, errors.New("the file must be a mapping with an llm: section")
	}
	var llmNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch k := root.Content[i].Value; k {
		case "llm":
			llmNode = root.Content[i+1]
		case "providers", "models", "retry":
			// A common slip: the section's keys written at the top level.
			return Config{}, fmt.Errorf("%s: belongs under llm: (line %d)", k, root.Content[i].Line)
		}
	}
	if llmNode == nil {
		return Config{}, nil
	}
	return decodeSection(llmNode, lines)
}

// decodeSection decodes the llm: section's node.
func decodeSection(llmNode *yaml.Node, lines bool) (Config, error) {
	var f fileLLM
	d := decoder{lines: lines}
	if err := d.decode(llmNode, reflect.ValueOf(&f).Elem(), "llm"); err != nil {
		return Config{}, err
	}
	cfg := Config{
		Retry: RetryConfig{
			Attempts:      f.Retry.Attempts,
			BaseDelay:     time.Duration(f.Retry.BaseDelay),
			MaxDelay:      time.Duration(f.Retry.MaxDelay),
			MaxRetryAfter: time.Duration(f.Retry.MaxRetryAfter),
		},
		Embedding:     EmbeddingConfig(f.Embedding),
		Transcription: TranscriptionConfig(f.Transcription),
		Speech:        SpeechConfig(f.Speech),
	}
	for _, p := range f.Providers {
		cfg.Providers = append(cfg.Providers, ProviderConfig{Name: p.Name, BaseURL: p.BaseURL,
			APIKey: p.APIKey, APIKeyEnv: p.APIKeyEnv, Timeout: time.Duration(p.Timeout)})
	}
	if len(f.Models) > 0 {
		cfg.Models = map[modeluse.Operation][]ModelConfig{}
	}
	for op, chain := range f.Models {
		var out []ModelConfig
		for _, m := range chain {
			out = append(out, ModelConfig{
				Provider: m.Provider, Model: m.Model, ContextWindow: m.ContextWindow,
				NoFunctionCalling: m.FunctionCalling != nil && !*m.FunctionCalling, Images: m.Images,
				InputCHFPer1M: m.InputCHFPer1M, OutputCHFPer1M: m.OutputCHFPer1M, CachedInputCHFPer1M: m.CachedCHFPer1M,
				CHFPerMinute: m.CHFPerMinute, CHFPer1MChars: m.CHFPer1MChars, CHFPerImage: m.CHFPerImage,
				Free: m.Free, Dimensions: m.Dimensions,
			})
		}
		cfg.Models[modeluse.Operation(op)] = out
	}
	return cfg, nil
}

// decoder maps a YAML node tree onto the file structs strictly: unknown
// keys, duplicate keys and mistyped values are errors that name the field.
type decoder struct{ lines bool }

func (d decoder) errorf(n *yaml.Node, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if d.lines && n != nil && n.Line > 0 {
		return fmt.Errorf("%s: %s (line %d)", path, msg, n.Line)
	}
	return fmt.Errorf("%s: %s", path, msg)
}

func (d decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if v.Type() == durationType {
		if n.Kind != yaml.ScalarNode {
			return d.errorf(n, path, "expected a duration such as 30s")
		}
		if secs, err := strconv.ParseFloat(n.Value, 64); err == nil {
			v.SetInt(int64(secs * float64(time.Second)))
			return nil
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil {
			return d.errorf(n, path, "%q is not a duration (e.g. 30s, 2m)", n.Value)
		}
		v.SetInt(int64(dur))
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if err := d.decode(n, nv.Elem(), path); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return d.errorf(n, path, "expected a mapping")
		}
		t := v.Type()
		var keys []string
		index := map[string]int{}
		for i := range t.NumField() {
			k := t.Field(i).Tag.Get("yaml")
			keys = append(keys, k)
			index[k] = i
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i].Value, n.Content[i+1]
			fi, ok := index[k]
			if !ok {
				return d.errorf(n.Content[i], path+"."+k, "unknown field (known: %s)", strings.Join(keys, ", "))
			}
			if seen[k] {
				return d.errorf(n.Content[i], path+"."+k, "given twice")
			}
			seen[k] = true
			if err := d.decode(val, v.Field(fi), path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return d.errorf(n, path, "expected a mapping")
		}
		m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if m.MapIndex(reflect.ValueOf(k)).IsValid() {
				return d.errorf(n.Content[i], path+"."+k, "given twice")
			}
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := d.decode(n.Content[i+1], ev, path+"."+k); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k), ev)
		}
		v.Set(m)
		return nil
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errorf(n, path, "expected a list")
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, e := range n.Content {
			if err := d.decode(e, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.errorf(n, path, "expected a single value, not a %s", kindName(n.Kind))
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Int, reflect.Int64:
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 10, 64)
		if err != nil {
			return d.errorf(n, path, "%q is not a whole number", n.Value)
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			return d.errorf(n, path, "%q is not a number", n.Value)
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return d.errorf(n, path, "%q is not true or false", n.Value)
		}
		v.SetBool(b)
	default:
		return d.errorf(n, path, "unsupported field type %s", v.Type())
	}
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// envName turns a provider name into its environment-variable infix:
// "my-llm" → "MY_LLM".
func envName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, s)
}

// applyEnv lays the environment over cfg. See LoadConfig for the variables.
func applyEnv(cfg *Config, env func(string) string) error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	providerIndex := func(name string) int {
		return slices.IndexFunc(cfg.Providers, func(p ProviderConfig) bool { return p.Name == name })
	}
	// The openai provider exists implicitly once any of its variables is
	// set, or a model variable needs it (below).
	implicitOpenAI := false
	addOpenAI := func() {
		if providerIndex("openai") < 0 {
			cfg.Providers = append(cfg.Providers, ProviderConfig{Name: "openai"})
			implicitOpenAI = true
		}
	}
	for _, suffix := range []string{"BASE_URL", "API_KEY", "TIMEOUT"} {
		if env("AGENTHOST_OPENAI_"+suffix) != "" {
			addOpenAI()
		}
	}

	// Chains first: they may add the openai provider.
	for _, op := range modeluse.Operations() {
		name := modelEnv(op)
		v := strings.TrimSpace(env(name))
		if v == "" {
			continue
		}
		if v == "none" {
			delete(cfg.Models, op)
			continue
		}
		var chain []ModelConfig
		for entry := range strings.SplitSeq(v, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			model, provider := entry, "openai"
			if i := strings.LastIndexByte(entry, '@'); i >= 0 {
				model, provider = entry[:i], entry[i+1:]
			}
			if model == "" || provider == "" {
				bad(name, "%q is not model or model@provider", entry)
				continue
			}
			if provider == "openai" {
				addOpenAI()
			} else if providerIndex(provider) < 0 {
				bad(name, "provider %q of %q is not configured (define it under llm.providers)", provider, entry)
				continue
			}
			chain = append(chain, modelTemplate(cfg, provider, model))
		}
		if cfg.Models == nil {
			cfg.Models = map[modeluse.Operation][]ModelConfig{}
		}
		cfg.Models[op] = chain
	}
	for _, op := range modeluse.Operations() {
		name := modelEnv(op) + "_FUNCTION_CALLING"
		if v := env(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				bad(name, "%q is not true or false", v)
				continue
			}
			for i := range cfg.Models[op] {
				cfg.Models[op][i].NoFunctionCalling = !b
			}
		}
	}

	for i := range cfg.Providers {
		p := &cfg.Providers[i]
		prefix := "AGENTHOST_" + envName(p.Name) + "_"
		if v := env(prefix + "BASE_URL"); v != "" {
			p.BaseURL = v
		}
		if v := env(prefix + "API_KEY"); v != "" {
			p.APIKey = v
		} else if p.APIKey == "" && p.APIKeyEnv != "" {
			if p.APIKey = env(p.APIKeyEnv); p.APIKey == "" {
				bad(fmt.Sprintf("llm.providers[%d].apiKeyEnv", i), "environment variable %s is not set", p.APIKeyEnv)
			}
		}
		if v := env(prefix + "TIMEOUT"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				bad(prefix+"TIMEOUT", "%q is not a duration (e.g. 60s)", v)
			}
			p.Timeout = d
		}
		base := p.BaseURL
		if base == "" && p.Name == "openai" {
			base = DefaultOpenAIBaseURL
		}
		// api.openai.com without a key can only fail, later and less clearly.
		if u, err := url.Parse(base); err == nil && u.Host == "api.openai.com" && p.APIKey == "" {
			field := fmt.Sprintf("llm.providers[%d].apiKey", i)
			if implicitOpenAI && p.Name == "openai" {
				field = "AGENTHOST_OPENAI_API_KEY"
			}
			bad(field, "missing: %s needs an API key (set %sAPI_KEY, or %sBASE_URL for a local server)", base, prefix, prefix)
		}
	}

	intVar := func(name string, set func(int)) {
		if v := env(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				bad(name, "%q is not a whole number ≥ 0", v)
				return
			}
			set(n)
		}
	}
	intVar("AGENTHOST_EMBEDDING_BATCH_SIZE", func(n int) { cfg.Embedding.BatchSize = n })
	intVar("AGENTHOST_EMBEDDING_DIMENSIONS", func(n int) {
		for i := range cfg.Models[modeluse.OpEmbedding] {
			cfg.Models[modeluse.OpEmbedding][i].Dimensions = n
		}
	})
	intVar("AGENTHOST_LLM_RETRY_ATTEMPTS", func(n int) { cfg.Retry.Attempts = n })
	if v := env("AGENTHOST_TRANSCRIPTION_LANGUAGE"); v != "" {
		cfg.Transcription.Language = v
	}
	if v := env("AGENTHOST_SPEECH_VOICE"); v != "" {
		cfg.Speech.Voice = v
	}
	if v := env("AGENTHOST_SPEECH_FORMAT"); v != "" {
		cfg.Speech.Format = v
	}
	return errors.Join(errs...)
}

// modelTemplate is the entry for provider/model named in an environment
// chain: the file's settings for the same model (prices, context window)
// when it has any, else a bare entry that the built-in table completes.
func modelTemplate(cfg *Config, provider, model string) ModelConfig {
	for _, op := range sortedOps(cfg.Models) {
		for _, m := range cfg.Models[op] {
			if m.Provider == provider && m.Model == model {
				return m
			}
		}
	}
	return ModelConfig{Provider: provider, Model: model}
}
