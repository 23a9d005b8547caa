package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/agenthost/agenthost/host/blob"
	"github.com/agenthost/agenthost/host/llm"
	"github.com/agenthost/agenthost/host/settings"
	"github.com/agenthost/agenthost/host/signin"
	"github.com/agenthost/agenthost/host/sqlquery"
	"github.com/agenthost/agenthost/host/websearch"
)

// File is the configuration file (docs/configuration.md), read once and
// strictly by ReadFile: every section's config is taken from here, none
// reads the file again.
type File struct {
	// Path is where it was read from ("" when there is no file).
	Path string
	// Root is the document, for `agenthost config` (settings.Lookup) and
	// the secret variables its *Env keys name (SecretEnv); nil without a file.
	Root *yaml.Node
	// LLM is the llm section before the environment (llm.Resolve applies it).
	LLM llm.Config
	// SignIn is the signIn section before its secrets are read; HasSignIn
	// says the file has one.
	SignIn    signin.Config
	HasSignIn bool
	// WebSearch and SQLQuery are their sections; nil when absent.
	WebSearch *websearch.Config
	SQLQuery  *sqlquery.Config
	// ObjectStorage is its section; nil when absent.
	ObjectStorage *ObjectStorageSection
}

// ObjectStorageSection is the objectStorage section (docs/configuration.md).
type ObjectStorageSection struct {
	Endpoint           string `yaml:"endpoint"`
	Region             string `yaml:"region"`
	Bucket             string `yaml:"bucket"`
	Prefix             string `yaml:"prefix"`
	PathStyle          bool   `yaml:"pathStyle"`
	AccessKeyID        string `yaml:"accessKeyId"`
	SecretAccessKey    string `yaml:"secretAccessKey"`
	SecretAccessKeyEnv string `yaml:"secretAccessKeyEnv"`
	SessionToken       string `yaml:"sessionToken"`
	SessionTokenEnv    string `yaml:"sessionTokenEnv"`
	Encryption         string `yaml:"encryption"`
	KMSKeyID           string `yaml:"kmsKeyId"`
	PartSize           int64  `yaml:"partSize"`
	Concurrency        int    `yaml:"concurrency"`
}

// ReadFile reads the configuration file at path ("" reads nothing: the zero
// File) once, and parses the whole of it strictly: a top-level key that is
// not a section (settings.Sections), a key no section has, or a value that
// does not read as its key's type is refused, naming the key and the value,
// with every such error of the file reported at once.
func ReadFile(path string) (File, error) {
	if path == "" {
		return File{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, fmt.Errorf("reading configuration: %w", err)
	}
	f, err := ParseFile(data, strings.EqualFold(filepath.Ext(path), ".json"))
	if err != nil {
		return File{}, fmt.Errorf("configuration %s:\n%w", path, err)
	}
	f.Path = path
	return f, nil
}

// ParseFile is ReadFile on the file's bytes; isJSON reads them as JSON
// (YAML reads JSON too, but not its tab indentation, and a JSON file's
// errors are said in JSON's terms).
func ParseFile(data []byte, isJSON bool) (File, error) {
	if isJSON {
		var buf bytes.Buffer
		if err := json.Indent(&buf, data, "", "  "); err != nil {
			return File{}, fmt.Errorf("invalid JSON: %w", err)
		}
		data = buf.Bytes()
	}
	root, err := settings.ParseFile(data) // the top level: sections only
	if err != nil {
		return File{}, err
	}
	f := File{Root: root}
	if root == nil {
		return f, nil
	}
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, node := root.Content[i].Value, root.Content[i+1]
		var err error
		switch key {
		case "llm":
			f.LLM, err = llm.ParseSection(node, !isJSON)
		case "signIn":
			f.SignIn, err = signin.ParseSection(node)
			f.HasSignIn = true
		case "webSearch":
			f.WebSearch = &websearch.Config{}
			err = strictSection(key, node, f.WebSearch)
		case "sqlQuery":
			f.SQLQuery = &sqlquery.Config{}
			err = strictSection(key, node, f.SQLQuery)
		case "objectStorage":
			f.ObjectStorage = &ObjectStorageSection{}
			err = strictSection(key, node, f.ObjectStorage)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return File{}, err
	}
	return f, nil
}

// strictSection decodes a section into v refusing unknown keys. yaml's own
// errors say a line of the re-encoded section; the key on that line is
// named before them, with its value and its line in the file, so that the
// error says which setting could not be read.
func strictSection(key string, n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(v); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return fmt.Errorf("%s: %w", key, err)
		}
		// The re-encoded section, whose lines yaml's errors count.
		var enc yaml.Node
		if yaml.Unmarshal(b, &enc) != nil || len(enc.Content) == 0 {
			return fmt.Errorf("%s: %w", key, err)
		}
		var msgs []string
		for _, m := range te.Errors {
			msgs = append(msgs, nameLine(enc.Content[0], n, key, m))
		}
		return fmt.Errorf("%s: %s", key, strings.Join(msgs, "; "))
	}
	return nil
}

// nameLine prefixes a yaml error about the re-encoded section enc ("line 3:
// field bukcet not found …", "line 2: cannot unmarshal !!str `big` …") with
// the key path and value it is about, and says the line of that key in
// the file (orig).
func nameLine(enc, orig *yaml.Node, key, msg string) string {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return msg
	}
	num, text, ok := strings.Cut(rest, ": ")
	if !ok {
		return msg
	}
	line, err := strconv.Atoi(num)
	if err != nil {
		return msg
	}
	path, value, steps := keyAt(enc, key, line, nil)
	if path == "" {
		return text
	}
	if k := follow(orig, steps); k != nil {
		return fmt.Sprintf("%s=%q (line %d): %s", path, value, k.Line, text)
	}
	return fmt.Sprintf("%s=%q: %s", path, value, text)
}

// keyAt is the dotted path (under prefix) of the key on line of n, its
// value, and the steps to it (mapping keys, or sequence indexes as "#i");
// "" when no key is there.
func keyAt(n *yaml.Node, prefix string, line int, steps []string) (string, string, []string) {
	if n.Kind == yaml.SequenceNode {
		for i, c := range n.Content {
			if p, v, st := keyAt(c, fmt.Sprintf("%s[%d]", prefix, i), line, append(steps, "#"+strconv.Itoa(i))); p != "" {
				return p, v, st
			}
		}
		return "", "", nil
	}
	if n.Kind != yaml.MappingNode {
		return "", "", nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		st := append(append([]string(nil), steps...), k.Value)
		if k.Line == line {
			return prefix + "." + k.Value, v.Value, st
		}
		if p, val, s := keyAt(v, prefix+"."+k.Value, line, st); p != "" {
			return p, val, s
		}
	}
	return "", "", nil
}

// follow returns the key node the steps of keyAt lead to in n; nil when
// they lead nowhere.
func follow(n *yaml.Node, steps []string) *yaml.Node {
	var key *yaml.Node
	for _, st := range steps {
		if i, ok := strings.CutPrefix(st, "#"); ok && n.Kind == yaml.SequenceNode {
			j, err := strconv.Atoi(i)
			if err != nil || j >= len(n.Content) {
				return nil
			}
			n = n.Content[j]
			continue
		}
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for k := 0; k+1 < len(n.Content); k += 2 {
			if n.Content[k].Value == st {
				key, next = n.Content[k], n.Content[k+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return key
}

// SecretEnv are the variables the file names as holding secrets: the
// values of its keys ending in "Env" (a model provider's or webSearch's
// apiKeyEnv, a database's dsnEnv), which start-up takes out of the
// process's environment.
func (f File) SecretEnv() []string {
	if f.Root == nil {
		return nil
	}
	var out []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if strings.HasSuffix(k.Value, "Env") && v.Kind == yaml.ScalarNode && v.Value != "" {
					out = append(out, v.Value)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(f.Root)
	return out
}

// s3Env are the variables that set or override objectStorage's keys; any of
// them set turns object storage on (so that a bucket variable misspelt is
// an error at start-up, not blobs silently kept elsewhere).
var s3Env = []string{
	"AGENTHOST_S3_ENDPOINT", "AGENTHOST_S3_REGION", "AGENTHOST_S3_BUCKET", "AGENTHOST_S3_PREFIX",
	"AGENTHOST_S3_PATH_STYLE", "AGENTHOST_S3_ACCESS_KEY_ID", "AGENTHOST_S3_SECRET_ACCESS_KEY",
	"AGENTHOST_S3_SESSION_TOKEN", "AGENTHOST_S3_ENCRYPTION", "AGENTHOST_S3_KMS_KEY_ID",
	"AGENTHOST_S3_PART_SIZE", "AGENTHOST_S3_CONCURRENCY",
}

// ObjectStorage is the object storage the file's objectStorage section and
// the AGENTHOST_S3_* variables (env), which override it, configure; nil
// when neither says anything: blobs then stay with the database (a
// directory beside the embedded one, or PostgreSQL). Only the form is
// checked here; blob.NewS3 checks the values and the bucket.
func (f File) ObjectStorageConfig(env func(string) string) (*blob.S3Config, error) {
	var sec ObjectStorageSection
	configured := false
	if f.ObjectStorage != nil {
		sec, configured = *f.ObjectStorage, true
	}
	for _, k := range s3Env {
		if env(k) != "" {
			configured = true
		}
	}
	if !configured {
		return nil, nil
	}
	secret, err := fromEnvKey(sec.SecretAccessKey, sec.SecretAccessKeyEnv, "secretAccessKey", env)
	if err != nil {
		return nil, err
	}
	token, err := fromEnvKey(sec.SessionToken, sec.SessionTokenEnv, "sessionToken", env)
	if err != nil {
		return nil, err
	}
	cfg := blob.S3Config{
		Endpoint: sec.Endpoint, Region: sec.Region, Bucket: sec.Bucket, Prefix: sec.Prefix, PathStyle: sec.PathStyle,
		AccessKeyID: sec.AccessKeyID, SecretAccessKey: secret, SessionToken: token,
		Encryption: sec.Encryption, KMSKeyID: sec.KMSKeyID, PartSize: sec.PartSize, Concurrency: sec.Concurrency,
	}
	for k, dst := range map[string]*string{
		"AGENTHOST_S3_ENDPOINT": &cfg.Endpoint, "AGENTHOST_S3_REGION": &cfg.Region, "AGENTHOST_S3_BUCKET": &cfg.Bucket,
		"AGENTHOST_S3_PREFIX": &cfg.Prefix, "AGENTHOST_S3_ACCESS_KEY_ID": &cfg.AccessKeyID,
		"AGENTHOST_S3_SECRET_ACCESS_KEY": &cfg.SecretAccessKey, "AGENTHOST_S3_SESSION_TOKEN": &cfg.SessionToken,
		"AGENTHOST_S3_ENCRYPTION": &cfg.Encryption, "AGENTHOST_S3_KMS_KEY_ID": &cfg.KMSKeyID,
	} {
		if v := env(k); v != "" {
			*dst = v
		}
	}
	if v := env("AGENTHOST_S3_PATH_STYLE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("AGENTHOST_S3_PATH_STYLE: %q is not true or false", v)
		}
		cfg.PathStyle = b
	}
	if v := env("AGENTHOST_S3_PART_SIZE"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("AGENTHOST_S3_PART_SIZE: %q is not a number of bytes", v)
		}
		cfg.PartSize = n
	}
	if v := env("AGENTHOST_S3_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("AGENTHOST_S3_CONCURRENCY: %q is not a number", v)
		}
		cfg.Concurrency = n
	}
	cfg.Encryption = strings.ToLower(cfg.Encryption)
	return &cfg, nil
}

// fromEnvKey is a secret given in the file (value) or in the variable the
// file names (envName); naming an unset variable is an error, never an
// empty secret.
func fromEnvKey(value, envName, key string, env func(string) string) (string, error) {
	switch {
	case envName == "":
		return value, nil
	case value != "":
		return "", fmt.Errorf("objectStorage: %s and %sEnv are both set; give one", key, key)
	}
	v := env(envName)
	if v == "" {
		return "", fmt.Errorf("objectStorage.%sEnv names %s, which is not set", key, envName)
	}
	return v, nil
}
