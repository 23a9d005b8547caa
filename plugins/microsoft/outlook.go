package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector"
)

// outlook is the service "outlook": mail and calendar. Paths:
//
//	""                              "mail" and "calendar"
//	mail                            the mail folders
//	mail/{folder}                   a folder's messages, newest first ({folder}: an id, or inbox, sentitems, drafts, deleteditems, archive, junkemail)
//	mail/{folder}/{message id}      a message (download: its MIME source, .eml)
//	calendar                        the calendar's events
//	calendar/{from}/{to}            the events between two dates (YYYY-MM-DD, calendarView)
//
// Search is Graph's $search over all messages; sendMail sends through
// /me/sendMail (saved to Sent Items); listMail lists a folder (inbox by default).
type outlook struct{}

// graphID matches Outlook's ids and well-known folder names (URL-safe base64).
var graphID = regexp.MustCompile(`^[A-Za-z0-9_=+-]{1,512}$`)

func mailEntry(folder string, m message) connector.Entry {
	from := ""
	if m.From != nil {
		from = m.From.EmailAddress.Address
	}
	subject := m.Subject
	if subject == "" {
		subject = "(no subject)"
	}
	return connector.Entry{ID: m.ID, Name: subject, Path: "mail/" + folder + "/" + m.ID, MIMEType: "message/rfc822", WebURL: m.WebLink,
		Modified: graphTime(m.ReceivedDateTime), Summary: clip(strings.TrimSpace("from "+from+": "+m.BodyPreview), 200)}
}

func folderID(s string) (string, error) {
	if !graphID.MatchString(s) {
		return "", pdk.Errorf("invalid_path", "%q is not a mail folder (an id, or inbox, sentitems, drafts, deleteditems)", s)
	}
	return s, nil
}

func (outlook) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	segs, err := segments(r.Path)
	if err != nil {
		return connector.Listing{}, err
	}
	if len(segs) == 0 {
		return connector.Listing{Entries: []connector.Entry{
			{ID: "mail", Name: "mail", Path: "mail", Folder: true, Summary: "mail folders"},
			{ID: "calendar", Name: "calendar", Path: "calendar", Folder: true, Summary: "calendar events (calendar/{from}/{to} for dates YYYY-MM-DD)"},
		}}, nil
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	switch {
	case segs[0] == "mail" && len(segs) == 1:
		pg, err := list[mailFolder](c, "/me/mailFolders", top(r.Limit), r.Cursor)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, f := range pg.Value {
			if graphID.MatchString(f.ID) {
				out.Entries = append(out.Entries, connector.Entry{ID: f.ID, Name: f.DisplayName, Path: "mail/" + f.ID, Folder: true,
					Summary: fmt.Sprintf("%d messages", f.TotalItemCount)})
			}
		}
		out.Next = pg.NextLink
		return out, nil
	case segs[0] == "mail" && len(segs) == 2:
		f, err := folderID(segs[1])
		if err != nil {
			return connector.Listing{}, err
		}
		pg, err := list[message](c, "/me/mailFolders/"+f+"/messages", top(r.Limit), r.Cursor)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, m := range pg.Value {
			if graphID.MatchString(m.ID) {
				out.Entries = append(out.Entries, mailEntry(f, m))
			}
		}
		out.Next = pg.NextLink
		return out, nil
	case segs[0] == "calendar" && (len(segs) == 1 || len(segs) == 3):
		path, q := "/me/events", top(r.Limit)
		q.Set("$orderby", "start/dateTime")
		if len(segs) == 3 {
			from, err1 := time.Parse("2006-01-02", segs[1])
			to, err2 := time.Parse("2006-01-02", segs[2])
			if err1 != nil || err2 != nil || !to.After(from) {
				return connector.Listing{}, pdk.Errorf("invalid_path", "calendar/{from}/{to} takes two dates YYYY-MM-DD, the second after the first")
			}
			path = "/me/calendarView"
			q.Set("startDateTime", from.Format(time.RFC3339))
			q.Set("endDateTime", to.Format(time.RFC3339))
		}
		pg, err := list[event](c, path, q, r.Cursor)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, e := range pg.Value {
			s := e.Start.DateTime + " – " + e.End.DateTime + " " + e.Start.TimeZone
			if e.Location.DisplayName != "" {
				s += ", " + e.Location.DisplayName
			}
			out.Entries = append(out.Entries, connector.Entry{ID: e.ID, Name: e.Subject, WebURL: e.WebLink, Modified: graphTime(e.Start.DateTime), Summary: s})
		}
		out.Next = pg.NextLink
		return out, nil
	}
	return connector.Listing{}, pdk.Errorf("invalid_path", "%q is not an Outlook path (mail, mail/{folder}, calendar, calendar/{from}/{to})", r.Path)
}

func (outlook) Download(r connector.DownloadRequest) (connector.File, error) {
	segs, err := segments(r.Path)
	if err != nil {
		return connector.File{}, err
	}
	if len(segs) != 3 || segs[0] != "mail" || !graphID.MatchString(segs[2]) {
		return connector.File{}, pdk.Errorf("invalid_path", "download a message: mail/{folder}/{message id}")
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.File{}, err
	}
	resp, err := c.do("GET", c.base+"/me/messages/"+segs[2]+"/$value", nil, map[string]string{"Accept": "*/*"}, nil)
	if err != nil {
		return connector.File{}, err
	}
	if limit := limitOf(r.MaxBytes); int64(len(resp.Body)) > limit {
		return connector.File{}, pdk.Errorf("too_large", "the message is over the limit of %d bytes", limit)
	}
	return connector.File{Name: segs[2] + ".eml", MIMEType: "message/rfc822", Data: resp.Body}, nil
}

func (outlook) Upload(connector.UploadRequest) (connector.Entry, error) {
	return connector.Entry{}, connector.ErrUnsupported("outlook", "upload (send mail with sendMail)")
}

func (outlook) Search(r connector.SearchRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	q := top(r.Limit)
	q.Set("$search", `"`+strings.ReplaceAll(strings.TrimSpace(r.Query), `"`, ``)+`"`)
	pg, err := list[message](c, "/me/messages", q, r.Cursor)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}, Next: pg.NextLink}
	for _, m := range pg.Value {
		if graphID.MatchString(m.ID) {
			out.Entries = append(out.Entries, mailEntry("inbox", m))
		}
	}
	return out, nil
}

func recipientsOf(addrs []string) ([]emailAddress, error) {
	out := []emailAddress{}
	for _, a := range addrs {
		a = strings.TrimSpace(a)
		if !strings.Contains(a, "@") || strings.ContainsAny(a, "\r\n<>,;") {
			return nil, pdk.Errorf("invalid", "%q is not an e-mail address", a)
		}
		var e emailAddress
		e.EmailAddress.Address = a
		out = append(out, e)
	}
	return out, nil
}

func (outlook) SendMail(r connector.SendMailRequest) (connector.Mail, error) {
	if len(r.Mail.To) == 0 {
		return connector.Mail{}, pdk.Errorf("invalid", "a message needs at least one recipient")
	}
	to, err := recipientsOf(r.Mail.To)
	if err != nil {
		return connector.Mail{}, err
	}
	cc, err := recipientsOf(r.Mail.Cc)
	if err != nil {
		return connector.Mail{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Mail{}, err
	}
	body, err := json.Marshal(map[string]any{"message": map[string]any{"subject": r.Mail.Subject, "body": itemBody{ContentType: "Text", Content: r.Mail.Body},
		"toRecipients": to, "ccRecipients": cc}, "saveToSentItems": true})
	if err != nil {
		return connector.Mail{}, err
	}
	resp, err := c.do("POST", c.base+"/me/sendMail", body, map[string]string{"Content-Type": "application/json"}, nil)
	if err != nil {
		return connector.Mail{}, err
	}
	if resp.Status != 202 {
		return connector.Mail{}, pdk.Errorf("bad_response", "Microsoft Graph answered sendMail with HTTP %d, not 202 Accepted", resp.Status)
	}
	m := r.Mail
	m.Date = time.Now().UTC()
	return m, nil
}

func (outlook) ListMail(r connector.ListMailRequest) (connector.MailList, error) {
	folder := r.Folder
	if folder == "" {
		folder = "inbox"
	}
	f, err := folderID(strings.TrimPrefix(folder, "mail/"))
	if err != nil {
		return connector.MailList{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.MailList{}, err
	}
	pg, err := list[message](c, "/me/mailFolders/"+f+"/messages", top(r.Limit), r.Cursor)
	if err != nil {
		return connector.MailList{}, err
	}
	out := connector.MailList{Messages: []connector.Mail{}, Next: pg.NextLink}
	for _, m := range pg.Value {
		mail := connector.Mail{ID: m.ID, To: addresses(m.ToRecipients), Cc: addresses(m.CcRecipients), Subject: m.Subject, Body: plain(m.Body), Date: graphTime(m.ReceivedDateTime)}
		if m.From != nil {
			mail.From = m.From.EmailAddress.Address
		}
		out.Messages = append(out.Messages, mail)
	}
	return out, nil
}

func addresses(rs []emailAddress) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.EmailAddress.Address)
	}
	return out
}
