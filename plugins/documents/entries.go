package main

import (
	"fmt"
	"strings"

	"github.com/agenthost/agenthost/pdk/knowledge"
)

// entryList writes a container's entries one per line.
func entryList(list []knowledge.Entry) string {
	if len(list) == 0 {
		return " none"
	}
	var b strings.Builder
	for _, e := range list {
		b.WriteString("\n  ")
		b.WriteString(entryLine(e))
	}
	return b.String()
}

// entryLine is one entry: its path (a nested container ends in "/"), type,
// size, status and, for a refused or failed one, why.
func entryLine(e knowledge.Entry) string {
	p := e.Path
	if e.Container {
		p += "/"
	}
	parts := []string{p}
	if e.MIMEType != "" {
		parts = append(parts, e.MIMEType)
	}
	parts = append(parts, fmt.Sprintf("%d bytes", e.Size), e.Status)
	if e.Error != "" {
		why := e.Error
		if e.ErrorKind != "" {
			why = e.ErrorKind + ": " + why
		}
		parts = append(parts, "error: "+why)
	}
	return strings.Join(parts, "  ")
}
