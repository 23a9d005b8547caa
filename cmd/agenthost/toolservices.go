package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"

	"github.com/agenthost/agenthost/host/sqlquery"
	"github.com/agenthost/agenthost/host/websearch"
	"gopkg.in/yaml.v3"
)

// toolServicesFile is the part of the configuration file the webSearch and
// sqlQuery capabilities read; other sections belong to others.
type toolServicesFile struct {
	WebSearch yaml.Node `yaml:"webSearch"`
	SQLQuery  yaml.Node `yaml:"sqlQuery"`
}

// connectToolServices reads sections webSearch and sqlQuery of the
// configuration file (and AGENTHOST_WEBSEARCH_* from the environment) and
// connects the capabilities of pf to them. Unconfigured, the tools answer
// that the operator has not set them up. The returned function closes the
// databases.
func connectToolServices(path string, env func(string) string, pf pluginFlags, logger *slog.Logger) (func(), error) {
	var f toolServicesFile
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading configuration: %w", err)
		}
		if err := yaml.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("configuration %s: %w", path, err)
		}
	}
	var ws *websearch.Config
	if f.WebSearch.Kind != 0 {
		ws = &websearch.Config{}
		if err := strictNode(&f.WebSearch, ws); err != nil {
			return nil, fmt.Errorf("configuration %s: webSearch: %w", path, err)
		}
	}
	if p := env("AGENTHOST_WEBSEARCH_PROVIDER"); p != "" {
		if ws == nil {
			ws = &websearch.Config{}
		}
		ws.Provider = p
	}
	if ws != nil {
		if u := env("AGENTHOST_WEBSEARCH_URL"); u != "" {
			ws.URL = u
		}
		if k := env("AGENTHOST_WEBSEARCH_API_KEY"); k != "" {
			ws.APIKey, ws.APIKeyEnv = k, ""
		}
		eo, err := pf.egress()
		if err != nil {
			return nil, err
		}
		s, err := websearch.New(*ws, env, eo)
		if err != nil {
			return nil, err
		}
		pf.caps.WebSearch.Searcher = s
		logger.Info("webSearch configured", "provider", s.Provider())
	}
	if f.SQLQuery.Kind == 0 {
		return func() {}, nil
	}
	var sc sqlquery.Config
	if err := strictNode(&f.SQLQuery, &sc); err != nil {
		return nil, fmt.Errorf("configuration %s: sqlQuery: %w", path, err)
	}
	svc, err := sqlquery.New(sc, env, logger)
	if err != nil {
		return nil, err
	}
	pf.caps.SQL.Service = svc
	logger.Info("sqlQuery configured", "databases", len(sc.Databases))
	return svc.Close, nil
}

// strictNode decodes a section refusing unknown keys, so that a misspelt
// key is an error instead of a setting silently missing.
func strictNode(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	return d.Decode(v)
}
