package settings

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrUnknownKey is wrapped by the error about a key the file may not have.
var ErrUnknownKey = errors.New("unknown key")

// ReadFile reads the configuration file at path (YAML, or JSON, which YAML
// reads too) and refuses a top-level key that is not one of Sections, with
// its line: a misspelt section (`objectstorage:`) would otherwise be a
// section nobody reads. It checks the top level only: server.ReadFile
// (host/server) is the one parse of the whole file, every section strictly,
// and the commands read the file through it. It returns the document for
// Lookup; "" reads nothing.
func ReadFile(path string) (*yaml.Node, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	doc, err := ParseFile(data)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", path, err)
	}
	return doc, nil
}

// ParseFile is ReadFile on the file's bytes.
func ParseFile(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // an empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: the file must be a mapping of sections (%s)", root.Line, strings.Join(Sections(), ", "))
	}
	var errs []error
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if !slices.Contains(Sections(), k.Value) {
			errs = append(errs, fmt.Errorf("%s (line %d): %w; the sections are %s", k.Value, k.Line, ErrUnknownKey, strings.Join(Sections(), ", ")))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return root, nil
}

// Lookup is the scalar at a dotted key path of the document ("objectStorage.bucket"),
// and whether the file sets it; a path through a list ("[]") is never found.
func Lookup(root *yaml.Node, path string) (string, bool) {
	if root == nil || path == "" || strings.Contains(path, "[]") {
		return "", false
	}
	n := root
	for _, part := range strings.Split(path, ".") {
		if n.Kind != yaml.MappingNode {
			return "", false
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == part {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return "", false
		}
		n = next
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value, true
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}
