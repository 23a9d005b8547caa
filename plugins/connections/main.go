// Command connections is the agent's connection tools (docs/connectors.md):
// listConnections, externalBrowse, externalSearch, externalDownload (the
// file lands in the workspace through the file bridge and is indexed),
// externalUpload, sendMail, listMail and externalAction (a connector's own
// actions: Jira's createIssue, addComment, transitionIssue, assignIssue). The connectors do the provider's work; the
// host attaches the user's credentials, which neither this plugin nor the
// connector ever sees.
package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector/wire"
	"github.com/agenthost/agenthost/pdk/files"
)

type listArgs struct{}

type browseArgs struct {
	Connection string `json:"connection" minLength:"1" description:"the connection id from listConnections"`
	Service    string `json:"service" minLength:"1" description:"one of the connection's services"`
	Path       string `json:"path,omitempty" description:"what to list; empty for the service's root. Jira: PROJ or PROJ-12. SharePoint: {host}/sites/{site}/{library}/{folder…} (or /sites/{site}/… on the tenant's host). OneDrive: a folder path. Outlook: mail, mail/{folder}, calendar, calendar/{from}/{to}. Teams: {team id}/{channel id}"`
	Cursor     string `json:"cursor,omitempty" description:"the next cursor of the previous page"`
	Limit      int    `json:"limit,omitempty" minimum:"0" maximum:"200"`
}

type searchArgs struct {
	Connection string `json:"connection" minLength:"1"`
	Service    string `json:"service" minLength:"1"`
	Query      string `json:"query" minLength:"1" description:"words to search for (SharePoint: \"{host}/sites/{site}[/{library}]: words\" searches that site)"`
	Cursor     string `json:"cursor,omitempty"`
	Limit      int    `json:"limit,omitempty" minimum:"0" maximum:"200"`
}

type downloadArgs struct {
	Connection string `json:"connection" minLength:"1"`
	Service    string `json:"service" minLength:"1"`
	Path       string `json:"path" minLength:"1" description:"the path of a file entry from externalBrowse"`
	Label      string `json:"label,omitempty" description:"groups the downloaded documents (docList:<label>)"`
}

type uploadArgs struct {
	Connection string `json:"connection" minLength:"1"`
	Service    string `json:"service" minLength:"1"`
	Path       string `json:"path" minLength:"1" description:"where to upload (a Jira issue key; a SharePoint or OneDrive folder path)"`
	File       string `json:"file" minLength:"1" description:"the workspace file: its id or a docItem reference"`
	Conflict   string `json:"conflict,omitempty" enum:"fail,replace,rename" default:"fail" description:"when a file of that name exists there: fail (change nothing), replace (new content for it), rename (store it as 'name (1).ext')"`
}

type mailArgs struct {
	Connection string   `json:"connection" minLength:"1"`
	Service    string   `json:"service" minLength:"1"`
	To         []string `json:"to" minItems:"1" description:"e-mail addresses (Teams: one channel, {team id}/{channel id})"`
	Cc         []string `json:"cc,omitempty"`
	Subject    string   `json:"subject"`
	Body       string   `json:"body"`
}

type listMailArgs struct {
	Connection string `json:"connection" minLength:"1"`
	Service    string `json:"service" minLength:"1" description:"a mail service: outlook or gmail"`
	Folder     string `json:"folder,omitempty" description:"the folder; empty for the inbox. Outlook: inbox, sentitems, drafts, … or a folder id. Gmail: a label's id or name (INBOX, SENT, …)"`
	Cursor     string `json:"cursor,omitempty" description:"the next cursor of the previous page"`
	Limit      int    `json:"limit,omitempty" minimum:"0" maximum:"50"`
}

type actionArgs struct {
	Connection string         `json:"connection" minLength:"1"`
	Service    string         `json:"service" minLength:"1"`
	Action     string         `json:"action" minLength:"1" description:"the connector's action. Jira (service issues): createIssue {project, issueType, summary, description}, addComment {issue, body}, transitionIssue {issue, to}, assignIssue {issue, accountId (Data Center: user name)}"`
	Arguments  map[string]any `json:"arguments,omitempty" description:"the action's arguments (connection and service are added)"`
}

// maxMailText bounds each message's text in listMail's answer, which the
// plugin's output bounds as a whole (maxOutputBytes).
const maxMailText = 4000

// mailList is listMail's answer: a message a paragraph.
func mailList(l wire.MailList) string {
	if len(l.Messages) == 0 {
		return "no messages"
	}
	var b strings.Builder
	for _, m := range l.Messages {
		fmt.Fprintf(&b, "- id=%s from=%s", m.ID, m.From)
		if !m.Date.IsZero() {
			fmt.Fprintf(&b, " date=%s", m.Date.UTC().Format("2006-01-02T15:04:05Z"))
		}
		fmt.Fprintf(&b, " subject=%q\n", m.Subject)
		body := m.Body
		if len(body) > maxMailText {
			cut := maxMailText
			for cut > 0 && !utf8.RuneStart(body[cut]) {
				cut--
			}
			body = body[:cut] + " …"
		}
		if body = strings.TrimSpace(body); body != "" {
			b.WriteString("  " + strings.ReplaceAll(body, "\n", "\n  ") + "\n")
		}
	}
	if l.Next != "" {
		fmt.Fprintf(&b, "more: pass cursor=%s\n", l.Next)
	}
	return b.String()
}

func listing(l wire.Listing) string {
	if len(l.Entries) == 0 {
		return "nothing here"
	}
	var b strings.Builder
	for _, e := range l.Entries {
		kind := "file"
		if e.Folder {
			kind = "folder"
		}
		fmt.Fprintf(&b, "- %s %q path=%s", kind, e.Name, e.Path)
		if e.Size > 0 {
			fmt.Fprintf(&b, " size=%d", e.Size)
		}
		if e.MIMEType != "" {
			fmt.Fprintf(&b, " type=%s", e.MIMEType)
		}
		if e.Summary != "" {
			fmt.Fprintf(&b, " — %s", e.Summary)
		}
		b.WriteString("\n")
	}
	if l.Next != "" {
		fmt.Fprintf(&b, "more: pass cursor=%s\n", l.Next)
	}
	return b.String()
}

func main() {}

func init() {
	pdk.Tool("listConnections", "Lists the user's connections to external providers with the services each offers.", func(listArgs) (string, error) {
		var out struct {
			Connections []struct {
				ID       string   `json:"id"`
				Provider string   `json:"provider"`
				Label    string   `json:"label"`
				Account  string   `json:"account"`
				BaseURL  string   `json:"baseUrl"`
				Services []string `json:"services"`
			} `json:"connections"`
		}
		if err := pdk.Invoke(capList, listArgs{}, &out); err != nil {
			return "", err
		}
		if len(out.Connections) == 0 {
			return "The user has no connections.", nil
		}
		var b strings.Builder
		for _, c := range out.Connections {
			fmt.Fprintf(&b, "- connection=%s provider=%s label=%q services=%s", c.ID, c.Provider, c.Label, strings.Join(c.Services, ","))
			if c.BaseURL != "" {
				fmt.Fprintf(&b, " site=%s", c.BaseURL)
			}
			b.WriteString("\n")
		}
		return b.String(), nil
	}, pdk.ReadOnly())
	pdk.Tool("externalBrowse", "Lists folders and files (or projects, issues, attachments) of a connection's service.", func(a browseArgs) (string, error) {
		var out wire.Listing
		err := pdk.Invoke(capBrowse, wire.BrowseRequest{Connection: a.Connection, Service: a.Service, Path: a.Path, Cursor: a.Cursor, Limit: a.Limit}, &out)
		if err != nil {
			return "", err
		}
		return listing(out), nil
	}, pdk.ReadOnly())
	pdk.Tool("externalSearch", "Searches a connection's service.", func(a searchArgs) (string, error) {
		var out wire.Listing
		err := pdk.Invoke(capSearch, wire.SearchRequest{Connection: a.Connection, Service: a.Service, Query: a.Query, Cursor: a.Cursor, Limit: a.Limit}, &out)
		if err != nil {
			return "", err
		}
		return listing(out), nil
	}, pdk.ReadOnly())
	pdk.Tool("externalDownload", "Downloads a file of a connection's service into the workspace, where it is indexed like an upload; returns its document reference.", func(a downloadArgs) (string, error) {
		var f wire.File
		if err := pdk.Invoke(capDownload, wire.DownloadRequest{Connection: a.Connection, Service: a.Service, Path: a.Path}, &f); err != nil {
			return "", err
		}
		w, err := files.Write(f.Name, f.MIMEType, f.Data, a.Label)
		if err != nil {
			return "", err
		}
		return w.Summary("downloaded"), nil
	})
	pdk.Tool("externalUpload", "Uploads a workspace file to a connection's service.", func(a uploadArgs) (string, error) {
		req := wire.UploadRequest{Connection: a.Connection, Service: a.Service, Path: a.Path, Conflict: a.Conflict}
		if _, ok := req.ConflictPolicy(); !ok {
			return "", pdk.Errorf("invalid", "conflict is fail, replace or rename, not %q", a.Conflict)
		}
		// The host reads the file from the workspace and streams it to
		// the provider in the connector's ranges: it never passes through
		// this plugin (docs/connectors.md, "Uploads").
		req.File = a.File
		var e wire.Entry
		if err := pdk.Invoke(capUpload, req, &e); err != nil {
			return "", err
		}
		return fmt.Sprintf("uploaded %q to %s (%d bytes)", e.Name, e.Path, e.Size), nil
	}, pdk.External("upload"))
	pdk.Tool("sendMail", "Sends a message through a connection's mail service.", func(a mailArgs) (string, error) {
		var m wire.Mail
		err := pdk.Invoke(capSendMail, wire.SendMailRequest{Connection: a.Connection, Service: a.Service,
			Mail: wire.Mail{To: a.To, Cc: a.Cc, Subject: a.Subject, Body: a.Body}}, &m)
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(m.To)
		return fmt.Sprintf("sent %q to %s", m.Subject, b), nil
	}, pdk.External("mail"))
	pdk.Tool("externalAction", "Runs one of a connection's own actions that change the provider (Jira: create an issue, comment, transition, assign).", func(a actionArgs) (string, error) {
		var out json.RawMessage
		err := pdk.Invoke(capAct, map[string]any{"connection": a.Connection, "service": a.Service, "action": a.Action, "arguments": a.Arguments}, &out)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s done: %s", a.Action, out), nil
	}, pdk.External("other"))
	pdk.Tool("listMail", "Lists the messages of a mail folder of a connection (Outlook, Gmail), newest first, with their text.", func(a listMailArgs) (string, error) {
		var l wire.MailList
		err := pdk.Invoke(capListMail, wire.ListMailRequest{Connection: a.Connection, Service: a.Service, Folder: a.Folder, Cursor: a.Cursor, Limit: a.Limit}, &l)
		if err != nil {
			return "", err
		}
		return mailList(l), nil
	}, pdk.ReadOnly())
}
