package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
	"github.com/agenthost/agenthost/pdk/connector"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

// issues is the service "issues". Paths: "" (nothing: name a project),
// "PROJ" (the project's issues), "PROJ-12" (the issue's attachments),
// "PROJ-12/<attachment id>" (one attachment).
type issues struct{}

var (
	projectKey = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}$`)
	issueKey   = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}-[1-9][0-9]{0,9}$`)
	numericID  = regexp.MustCompile(`^[0-9]{1,18}$`)
)

const fields = "summary,status,attachment"

func pageSize(n int) int {
	if n <= 0 || n > 100 {
		return 50
	}
	return n
}

func (issues) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	p := strings.Trim(r.Path, "/")
	switch {
	case p == "":
		return connector.Listing{}, pdk.Errorf("invalid_path", "name a project key (e.g. PROJ) or an issue key (PROJ-12) to browse; use search to find issues")
	case projectKey.MatchString(p):
		return c.searchJQL(`project = "`+p+`" ORDER BY key ASC`, r.Cursor, r.Limit)
	case issueKey.MatchString(p):
		is, err := c.issue(p)
		if err != nil {
			return connector.Listing{}, err
		}
		out := connector.Listing{Entries: []connector.Entry{}}
		for _, a := range is.Fields.Attachment {
			out.Entries = append(out.Entries, attachmentEntry(is.Key, a))
		}
		return out, nil
	}
	return connector.Listing{}, pdk.Errorf("invalid_path", "%q is neither a project key nor an issue key", r.Path)
}

func attachmentEntry(key string, a attachment) connector.Entry {
	return connector.Entry{ID: a.ID, Name: a.Filename, Path: key + "/" + a.ID, Size: a.Size, MIMEType: a.MIMEType, Modified: jiraTime(a.Created)}
}

func (c *client) issue(key string) (issue, error) {
	var is issue
	_, err := c.do("GET", "/rest/api/"+c.api()+"/issue/"+url.PathEscape(key), url.Values{"fields": {fields}}, nil, nil, &is)
	return is, err
}

func (c *client) searchJQL(jql, cursor string, limit int) (connector.Listing, error) {
	if !c.cloud {
		return c.searchV2(jql, cursor, limit)
	}
	q := url.Values{"jql": {jql}, "fields": {fields}, "maxResults": {strconv.Itoa(pageSize(limit))}}
	if cursor != "" {
		q.Set("nextPageToken", cursor)
	}
	var page searchPage
	if _, err := c.do("GET", "/rest/api/3/search/jql", q, nil, nil, &page); err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	for _, is := range page.Issues {
		out.Entries = append(out.Entries, connector.Entry{ID: is.ID, Name: is.Key, Path: is.Key, Folder: true, Summary: summary(is),
			WebURL: c.browseURL(is.Key)})
	}
	if !page.IsLast && page.NextPageToken != "" {
		out.Next = page.NextPageToken
	}
	return out, nil
}

// searchV2 is Data Center's and Server's search (GET /rest/api/2/search,
// paged by startAt and total: they have no enhanced search/jql).
func (c *client) searchV2(jql, cursor string, limit int) (connector.Listing, error) {
	start, err := startAt(cursor)
	if err != nil {
		return connector.Listing{}, err
	}
	q := url.Values{"jql": {jql}, "fields": {fields}, "maxResults": {strconv.Itoa(pageSize(limit))}, "startAt": {strconv.Itoa(start)}}
	var page boardIssues
	if _, err := c.do("GET", "/rest/api/2/search", q, nil, nil, &page); err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	for _, is := range page.Issues {
		out.Entries = append(out.Entries, connector.Entry{ID: is.ID, Name: is.Key, Path: is.Key, Folder: true, Summary: summary(is),
			WebURL: c.browseURL(is.Key)})
	}
	if next := page.StartAt + len(page.Issues); next < page.Total && len(page.Issues) > 0 {
		out.Next = strconv.Itoa(next)
	}
	return out, nil
}

// issueText is an issue as a Markdown document: its summary, status,
// people, description and comments, rich text read from ADF with its
// structure (headings, lists, tables, code, mentions, links).
func (c *client) issueText(key string) (connector.File, error) {
	var is issue
	if _, err := c.do("GET", "/rest/api/"+c.api()+"/issue/"+url.PathEscape(key),
		url.Values{"fields": {"summary,status,description,comment,assignee,reporter"}}, nil, nil, &is); err != nil {
		return connector.File{}, err
	}
	var b strings.Builder
	b.WriteString("# " + is.Key + ": " + is.Fields.Summary + "\n\n")
	if is.Fields.Status.Name != "" {
		b.WriteString("Status: " + is.Fields.Status.Name + "\n")
	}
	for _, p := range []struct {
		role string
		who  *person
	}{{"Assignee", is.Fields.Assignee}, {"Reporter", is.Fields.Reporter}} {
		if p.who != nil && p.who.DisplayName != "" {
			b.WriteString(p.role + ": " + p.who.DisplayName + "\n")
		}
	}
	if d := richText(is.Fields.Description); d != "" {
		b.WriteString("\n## Description\n\n" + d + "\n")
	}
	if len(is.Fields.Comment.Comments) > 0 {
		b.WriteString("\n## Comments\n")
		for _, cm := range is.Fields.Comment.Comments {
			b.WriteString("\n### " + cm.Author.DisplayName + ", " + cm.Created + "\n\n" + richText(cm.Body) + "\n")
		}
	}
	return connector.File{Name: is.Key + ".md", MIMEType: "text/markdown", Data: []byte(b.String())}, nil
}

// attachmentID reads "PROJ-12/10001" or an id.
func attachmentID(r connector.DownloadRequest) (string, error) {
	id := r.ID
	if id == "" {
		key, rest, ok := strings.Cut(strings.Trim(r.Path, "/"), "/")
		if !ok || !issueKey.MatchString(key) {
			return "", pdk.Errorf("invalid_path", "download a path PROJ-12/<attachment id> from browsing an issue")
		}
		id = rest
	}
	if !numericID.MatchString(id) {
		return "", pdk.Errorf("invalid_path", "%q is not an attachment id", id)
	}
	return id, nil
}

func (issues) Download(r connector.DownloadRequest) (connector.File, error) {
	if key := strings.Trim(r.Path, "/"); r.ID == "" && issueKey.MatchString(key) {
		// The issue itself: its text, description and comments.
		c, err := newClient(r.Connection)
		if err != nil {
			return connector.File{}, err
		}
		return c.issueText(key)
	}
	id, err := attachmentID(r)
	if err != nil {
		return connector.File{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.File{}, err
	}
	var meta attachment
	if _, err := c.do("GET", "/rest/api/"+c.api()+"/attachment/"+id, nil, nil, nil, &meta); err != nil {
		return connector.File{}, err
	}
	if r.MaxBytes > 0 && meta.Size > r.MaxBytes {
		return connector.File{}, pdk.Errorf("too_large", "attachment %s is %d bytes, over the limit of %d", meta.Filename, meta.Size, r.MaxBytes)
	}
	// redirect=false: the content itself, not a 303 to the media host.
	data, err := c.do("GET", "/rest/api/"+c.api()+"/attachment/content/"+id, url.Values{"redirect": {"false"}}, nil, map[string]string{"Accept": "*/*"}, nil)
	if err != nil {
		return connector.File{}, err
	}
	if r.MaxBytes > 0 && int64(len(data)) > r.MaxBytes {
		return connector.File{}, pdk.Errorf("too_large", "attachment %s is over the limit of %d bytes", meta.Filename, r.MaxBytes)
	}
	return connector.File{Name: meta.Filename, MIMEType: meta.MIMEType, Data: data}, nil
}

// Upload attaches a file to an issue with the request's conflict policy.
// Jira keeps any number of attachments of one name, so the policy is the
// connector's: fail refuses a name the issue has ("exists"), rename
// attaches "name (n).ext", replace attaches the file and then deletes the
// older attachments of that name (Jira attachments are immutable; the
// new one has a new id).
func (issues) Upload(r connector.UploadRequest) (connector.Entry, error) {
	key := strings.Trim(r.Path, "/")
	if !issueKey.MatchString(key) {
		return connector.Entry{}, pdk.Errorf("invalid_path", "upload to an issue key (PROJ-12), not %q", r.Path)
	}
	policy, ok := r.ConflictPolicy()
	if !ok {
		return connector.Entry{}, pdk.Errorf("invalid", "conflict is fail, replace or rename, not %q", r.Conflict)
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Entry{}, err
	}
	is, err := c.issue(key)
	if err != nil {
		return connector.Entry{}, err
	}
	taken := map[string][]string{}
	for _, a := range is.Fields.Attachment {
		taken[a.Filename] = append(taken[a.Filename], a.ID)
	}
	name := r.Name
	if len(taken[name]) > 0 {
		switch policy {
		case wire.ConflictFail:
			return connector.Entry{}, pdk.Errorf("exists", "%s is attached to %s (conflict=fail); pass conflict=replace or conflict=rename", name, key)
		case wire.ConflictRename:
			for n := 1; len(taken[name]) > 0; n++ {
				name = wire.RenameCandidate(r.Name, n)
			}
		}
	}
	// The site's own limit (an administrator's setting: Cloud's default
	// is 1 GB a file, at most 2 GB; Data Center's 10 MB) is asked first,
	// so a file over it is refused before its bytes are sent.
	var meta struct {
		Enabled     bool  `json:"enabled"`
		UploadLimit int64 `json:"uploadLimit"`
	}
	if _, err := c.do("GET", "/rest/api/"+c.api()+"/attachment/meta", nil, nil, nil, &meta); err != nil {
		return connector.Entry{}, err
	}
	if !meta.Enabled {
		return connector.Entry{}, pdk.Errorf("forbidden", "attachments are turned off on this Jira site")
	}
	if meta.UploadLimit > 0 && r.Size > meta.UploadLimit {
		return connector.Entry{}, pdk.Errorf("too_large", "%s is %d bytes, over this Jira site's attachment limit of %d", r.Name, r.Size, meta.UploadLimit)
	}
	parts, ct := multipartFile(name, r.MIMEType, r.Size)
	var out []attachment
	resp, err := connection.Send(connection.Request{Connection: c.conn, Method: "POST", URL: c.base + "/rest/api/" + c.api() + "/issue/" + url.PathEscape(key) + "/attachments",
		Parts: parts, Headers: map[string]string{"Content-Type": ct, "X-Atlassian-Token": "no-check", "Accept": "application/json"}}, statusError)
	if err != nil {
		return connector.Entry{}, err
	}
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return connector.Entry{}, pdk.Errorf("bad_response", "Jira answered the attachment with something that is not its JSON: %v", err)
	}
	if len(out) == 0 {
		return connector.Entry{}, pdk.Errorf("bad_response", "Jira stored no attachment")
	}
	if policy == wire.ConflictReplace {
		for _, id := range taken[name] {
			if id == out[0].ID || !attachmentIDPattern.MatchString(id) {
				continue
			}
			if _, err := c.do("DELETE", "/rest/api/"+c.api()+"/attachment/"+id, nil, nil, nil, nil); err != nil {
				return connector.Entry{}, fmt.Errorf("attached %s as %s, but the older attachment %s stays: %w", name, out[0].ID, id, err)
			}
		}
	}
	return attachmentEntry(key, out[0]), nil
}

// attachmentIDPattern is an attachment id as Jira gives them (digits).
var attachmentIDPattern = regexp.MustCompile(`^[0-9]{1,20}$`)

func (issues) Search(r connector.SearchRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	return c.searchJQL(`text ~ `+jqlText(r.Query)+` ORDER BY updated DESC`, r.Cursor, r.Limit)
}
