package main

import (
	"encoding/json"
	"strings"
	"time"
)

// issue is the part of a Jira issue the connector reads.
type issue struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	Fields struct {
		Summary string `json:"summary"`
		Status  struct {
			Name string `json:"name"`
		} `json:"status"`
		Attachment []attachment `json:"attachment"`
		// Description and comment bodies are ADF in v3, strings in v2.
		Description json.RawMessage `json:"description"`
		Comment     struct {
			Comments []comment `json:"comments"`
			Total    int       `json:"total"`
		} `json:"comment"`
		Assignee *person `json:"assignee"`
		Reporter *person `json:"reporter"`
	} `json:"fields"`
}

// person is a user as an issue names them.
type person struct {
	DisplayName string `json:"displayName"`
}

// comment is an issue's comment.
type comment struct {
	Author  person          `json:"author"`
	Body    json.RawMessage `json:"body"`
	Created string          `json:"created"`
}

// attachment is an issue's attachment.
type attachment struct {
	ID       string `json:"id"`
	Filename string `json:"filename"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	Created  string `json:"created"`
	Content  string `json:"content"`
}

// searchPage is the enhanced JQL search's answer.
type searchPage struct {
	Issues        []issue `json:"issues"`
	NextPageToken string  `json:"nextPageToken"`
	IsLast        bool    `json:"isLast"`
}

// board is an Agile board.
type board struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// boardPage is an Agile list page.
type boardPage struct {
	StartAt    int     `json:"startAt"`
	MaxResults int     `json:"maxResults"`
	Total      int     `json:"total"`
	IsLast     bool    `json:"isLast"`
	Values     []board `json:"values"`
}

// boardIssues is an Agile board's issues page (no isLast: total says).
type boardIssues struct {
	StartAt    int     `json:"startAt"`
	MaxResults int     `json:"maxResults"`
	Total      int     `json:"total"`
	Issues     []issue `json:"issues"`
}

// jiraTime parses Jira's timestamps (2026-03-01T09:00:00.000+0000).
func jiraTime(s string) time.Time {
	for _, layout := range []string{"2006-01-02T15:04:05.000-0700", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func summary(is issue) string {
	s := is.Fields.Summary
	if is.Fields.Status.Name != "" {
		s += " [" + is.Fields.Status.Name + "]"
	}
	return strings.TrimSpace(s)
}
