package manifest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agenthost/agenthost/host/wasm/wasmbin"
)

// ErrNoManifest is returned for a module that carries no manifest section.
var ErrNoManifest = errors.New("no " + SectionName + " custom section: build the plugin with `agenthost plugin build`")

// Read extracts and validates the manifest embedded in a Wasm module. It parses
// the module's section headers only; no plugin code runs.
func Read(module []byte) (*Manifest, error) {
	payload, ok, err := wasmbin.CustomSection(module, SectionName)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if !ok {
		return nil, ErrNoManifest
	}
	return Parse(payload)
}

// Embed validates m and returns a copy of module that carries it.
func Embed(module []byte, m *Manifest) ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return wasmbin.SetCustomSection(module, SectionName, data)
}
