package main

import (
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector"
	"github.com/agenthost/agenthost/pdk/filetransfer"
)

// Bounds of a search: how deep it descends, how many directories it lists
// and how many entries it looks at, so that a huge tree or a hostile
// server cannot keep it going.
const (
	maxDepth   = 8
	maxDirs    = 200
	maxVisited = 20000
)

// Search matches names (case-insensitive substring) under the query's
// folder, breadth first. A query "dir:NAME" searches under dir only
// ("reports/2024:invoice"). Links are followed only when the host resolved
// them inside the base directory, and a directory reached twice (a link
// loop) is listed once.
func (files) Search(r connector.SearchRequest) (connector.Listing, error) {
	root, needle := "", r.Query
	if dir, q, ok := strings.Cut(r.Query, ":"); ok {
		root, needle = strings.Trim(dir, "/"), q
	}
	needle = strings.ToLower(strings.TrimSpace(needle))
	if needle == "" {
		return connector.Listing{}, pdk.Errorf("invalid_query", "name the text to find in file names")
	}
	limit := r.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	skip := 0
	if r.Cursor != "" {
		n, err := strconv.Atoi(r.Cursor)
		if err != nil || n < 0 {
			return connector.Listing{}, pdk.Errorf("invalid_cursor", "cursor %q is not one this connector gave", r.Cursor)
		}
		skip = n
	}
	type dir struct {
		path  string
		depth int
	}
	// seen holds the directories listed, by the path they resolve to.
	seen := map[string]bool{root: true}
	queue := []dir{{root, 0}}
	out := connector.Listing{Entries: []connector.Entry{}}
	matched, visited, listed := 0, 0, 0
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if listed++; listed > maxDirs {
			return out, pdk.Errorf("search_too_broad", "the search listed %d directories without finishing; search a folder (\"folder:%s\")", maxDirs, needle)
		}
		l, err := filetransfer.List(r.Connection, d.path, 0)
		if err != nil {
			if d.path == root {
				return connector.Listing{}, err
			}
			continue // a directory that vanished or is not readable
		}
		for _, e := range l.Entries {
			if visited++; visited > maxVisited {
				return out, pdk.Errorf("search_too_broad", "the search looked at %d entries without finishing; search a folder", maxVisited)
			}
			if strings.Contains(strings.ToLower(e.Name), needle) {
				if matched >= skip && len(out.Entries) < limit {
					out.Entries = append(out.Entries, entry(e))
				}
				matched++
				if len(out.Entries) == limit && matched > skip+limit {
					out.Next = strconv.Itoa(skip + limit)
					return out, nil
				}
			}
			if !e.Dir || d.depth+1 > maxDepth {
				continue
			}
			real := e.Path
			if e.Link {
				if e.Target == "" {
					continue
				}
				real = e.Target
			}
			if seen[real] {
				continue // a link loop, or a second way to the same directory
			}
			seen[real] = true
			queue = append(queue, dir{real, d.depth + 1})
		}
	}
	return out, nil
}
