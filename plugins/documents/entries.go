package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// entries writes container entries as the host gives them (an array of
// entry objects, or one), one line each: path, type, size, status.
func entries(raw json.RawMessage) string {
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		var one map[string]any
		if err := json.Unmarshal(raw, &one); err != nil {
			return string(raw)
		}
		return entryLine(one)
	}
	if len(list) == 0 {
		return "none"
	}
	var b strings.Builder
	for _, e := range list {
		b.WriteString("\n  ")
		b.WriteString(entryLine(e))
	}
	return b.String()
}

// entryLine is one entry; keys are matched without regard to case, so the
// line does not depend on how the host spells them.
func entryLine(e map[string]any) string {
	get := func(k string) any {
		for key, v := range e {
			if strings.EqualFold(key, k) {
				return v
			}
		}
		return nil
	}
	var parts []string
	if p, _ := get("path").(string); p != "" {
		if c, _ := get("container").(bool); c {
			p += "/"
		}
		parts = append(parts, p)
	}
	if m, _ := get("mimeType").(string); m != "" {
		parts = append(parts, m)
	}
	if s, ok := get("size").(float64); ok {
		parts = append(parts, fmt.Sprintf("%.0f bytes", s))
	}
	if s, _ := get("status").(string); s != "" {
		parts = append(parts, s)
	}
	if s, _ := get("error").(string); s != "" {
		parts = append(parts, "error: "+s)
	}
	for _, k := range []string{"fileId", "id"} {
		if s, _ := get(k).(string); s != "" {
			parts = append(parts, "file "+s)
			break
		}
	}
	if len(parts) == 0 {
		b, _ := json.Marshal(e)
		return string(b)
	}
	return strings.Join(parts, "  ")
}
