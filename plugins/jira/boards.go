package main

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector"
)

// boards is the service "boards": "" lists the Agile boards, "<board id>"
// a board's issues. Cursors are startAt offsets.
type boards struct{}

func startAt(cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(cursor)
	if err != nil || n < 0 {
		return 0, pdk.Errorf("invalid_cursor", "cursor %q is not from a board listing", cursor)
	}
	return n, nil
}

func (boards) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	start, err := startAt(r.Cursor)
	if err != nil {
		return connector.Listing{}, err
	}
	q := url.Values{"startAt": {strconv.Itoa(start)}, "maxResults": {strconv.Itoa(pageSize(r.Limit))}}
	p := strings.Trim(r.Path, "/")
	out := connector.Listing{Entries: []connector.Entry{}}
	if p == "" {
		var page boardPage
		if _, err := c.do("GET", "/rest/agile/1.0/board", q, nil, nil, &page); err != nil {
			return connector.Listing{}, err
		}
		for _, b := range page.Values {
			id := strconv.Itoa(b.ID)
			out.Entries = append(out.Entries, connector.Entry{ID: id, Name: b.Name, Path: id, Folder: true, Summary: b.Type + " board"})
		}
		if !page.IsLast && len(page.Values) > 0 {
			out.Next = strconv.Itoa(page.StartAt + len(page.Values))
		}
		return out, nil
	}
	if !numericID.MatchString(p) {
		return connector.Listing{}, pdk.Errorf("invalid_path", "%q is not a board id", r.Path)
	}
	q.Set("fields", fields)
	var page boardIssues
	if _, err := c.do("GET", "/rest/agile/1.0/board/"+p+"/issue", q, nil, nil, &page); err != nil {
		return connector.Listing{}, err
	}
	for _, is := range page.Issues {
		out.Entries = append(out.Entries, connector.Entry{ID: is.ID, Name: is.Key, Path: is.Key, Folder: true, Summary: summary(is),
			WebURL: c.browseURL(is.Key)})
	}
	if next := page.StartAt + len(page.Issues); next < page.Total && len(page.Issues) > 0 {
		out.Next = strconv.Itoa(next)
	}
	return out, nil
}

func (boards) Download(connector.DownloadRequest) (connector.File, error) {
	return connector.File{}, connector.ErrUnsupported("boards", "download (download attachments through the issues service)")
}

func (boards) Upload(connector.UploadRequest) (connector.Entry, error) {
	return connector.Entry{}, connector.ErrUnsupported("boards", "upload")
}

func (boards) Search(connector.SearchRequest) (connector.Listing, error) {
	return connector.Listing{}, connector.ErrUnsupported("boards", "search (search issues through the issues service)")
}
