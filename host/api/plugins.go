package api

import (
	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/wasm"
	"github.com/agenthost/agenthost/host/wasm/manifest"
)

type pluginView struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Kind         string   `json:"kind"`
	Description  string   `json:"description"`
	Builtin      bool     `json:"builtin"`
	SHA256       string   `json:"sha256"`
	Capabilities []string `json:"capabilities"`
	Tools        []string `json:"tools"`
	// Grant is what the plugin asked for and what the operator granted
	// (capabilities, mounts, ceilings and the limits it runs under).
	Grant wasm.Assessment `json:"grant"`
	// Running counts the calls running on it now; Kept marks an earlier
	// version an upgrade kept for tool sets pinned to it ("tool@version").
	Running int  `json:"running"`
	Kept    bool `json:"kept,omitempty"`
}

func viewOf(pl *wasm.Plugin) pluginView {
	m := pl.Manifest()
	v := pluginView{Name: m.Name, Version: m.Version, Kind: string(m.Kind), Description: m.Description,
		Builtin: pl.Builtin(), SHA256: pl.SHA256(), Capabilities: append([]string{}, m.Capabilities...), Tools: []string{}, Grant: pl.Assessment(),
		Running: pl.Running()}
	for _, t := range m.Tools {
		v.Tools = append(v.Tools, t.Name)
	}
	return v
}

func handlePlugins(p Plugins) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out := []pluginView{}
		for _, pl := range p.Plugins() {
			out = append(out, viewOf(pl))
		}
		if k, ok := p.(interface{ Kept() []*wasm.Plugin }); ok {
			for _, pl := range k.Kept() {
				v := viewOf(pl)
				v.Kept = true
				out = append(out, v)
			}
		}
		return c.JSON(out)
	}
}

// readManifest returns the name in a module's manifest.
func readManifest(module []byte) (string, error) {
	m, err := manifest.Read(module)
	if err != nil {
		return "", err
	}
	return m.Name, nil
}

func handleTools(p Plugins) fiber.Handler {
	return func(c *fiber.Ctx) error {
		return c.JSON(p.Tools())
	}
}

func handleHealth(ready func() error) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if ready != nil {
			if err := ready(); err != nil {
				return problem(c, fiber.StatusServiceUnavailable, "Starting", err.Error())
			}
		}
		return c.JSON(fiber.Map{"status": "ok"})
	}
}
