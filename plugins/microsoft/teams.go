package main

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector"
)

// teams is the service "teams". Paths are ids (names are shown beside them):
//
//	""                       the teams the user joined
//	{team id}                the team's channels
//	{team id}/{channel id}   the channel's messages, newest first
//
// It is a mail-like service: listMail lists a channel's messages (folder
// "{team id}/{channel id}") and sendMail posts a message to the channel
// named as its one recipient ("{team id}/{channel id}"). Teams search
// needs Graph's POST /search/query, which a read-only tool may not send.
type teams struct{}

var (
	teamID    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	channelID = regexp.MustCompile(`^19:[A-Za-z0-9_.-]{1,200}@thread\.(tacv2|skype)$`)
)

// channelPath parses "{team id}/{channel id}".
func channelPath(p string) (string, string, error) {
	segs, err := segments(p)
	if err != nil {
		return "", "", err
	}
	if len(segs) != 2 || !teamID.MatchString(segs[0]) || !channelID.MatchString(segs[1]) {
		return "", "", pdk.Errorf("invalid_path", "name a channel as {team id}/{channel id} (browse the teams service to find them)")
	}
	return segs[0], segs[1], nil
}

func channelAPI(team, ch string) string {
	return "/teams/" + team + "/channels/" + url.PathEscape(ch) + "/messages"
}

func sender(m chatMessage) string {
	if m.From != nil && m.From.User != nil {
		return m.From.User.DisplayName
	}
	return ""
}

func (teams) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	segs, err := segments(r.Path)
	if err != nil {
		return connector.Listing{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	switch len(segs) {
	case 0:
		pg, err := list[team](c, "/me/joinedTeams", nil, r.Cursor)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, t := range pg.Value {
			if teamID.MatchString(t.ID) {
				out.Entries = append(out.Entries, connector.Entry{ID: t.ID, Name: t.DisplayName, Path: t.ID, Folder: true, Summary: clip(t.Description, 200)})
			}
		}
		out.Next = pg.NextLink
		return out, nil
	case 1:
		if !teamID.MatchString(segs[0]) {
			return connector.Listing{}, pdk.Errorf("invalid_path", "%q is not a team id", segs[0])
		}
		pg, err := list[channel](c, "/teams/"+segs[0]+"/channels", nil, r.Cursor)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, ch := range pg.Value {
			if channelID.MatchString(ch.ID) {
				out.Entries = append(out.Entries, connector.Entry{ID: ch.ID, Name: ch.DisplayName, Path: segs[0] + "/" + ch.ID, Folder: true, WebURL: ch.WebURL, Summary: "channel"})
			}
		}
		out.Next = pg.NextLink
		return out, nil
	}
	team, ch, err := channelPath(r.Path)
	if err != nil {
		return connector.Listing{}, err
	}
	pg, err := list[chatMessage](c, channelAPI(team, ch), top(min(pageSize(r.Limit), 50)), r.Cursor)
	if err != nil {
		return connector.Listing{}, err
	}
	for _, m := range pg.Value {
		name := m.Subject
		if name == "" {
			name = "message from " + sender(m)
		}
		out.Entries = append(out.Entries, connector.Entry{ID: m.ID, Name: name, WebURL: m.WebURL, Modified: graphTime(m.CreatedDateTime),
			Summary: clip(sender(m)+": "+plain(m.Body), 300)})
	}
	out.Next = pg.NextLink
	return out, nil
}

func (teams) Download(connector.DownloadRequest) (connector.File, error) {
	return connector.File{}, connector.ErrUnsupported("teams", "download (files shared in a channel are in the team's SharePoint library)")
}

func (teams) Upload(connector.UploadRequest) (connector.Entry, error) {
	return connector.Entry{}, connector.ErrUnsupported("teams", "upload (post a message with sendMail, or upload to the team's SharePoint library)")
}

func (teams) Search(connector.SearchRequest) (connector.Listing, error) {
	return connector.Listing{}, connector.ErrUnsupported("teams", "search")
}

// SendMail posts r.Mail to the channel its one recipient names.
func (teams) SendMail(r connector.SendMailRequest) (connector.Mail, error) {
	if len(r.Mail.To) != 1 || len(r.Mail.Cc) != 0 {
		return connector.Mail{}, pdk.Errorf("invalid", "post to one channel: to = [\"{team id}/{channel id}\"]")
	}
	team, ch, err := channelPath(r.Mail.To[0])
	if err != nil {
		return connector.Mail{}, err
	}
	if strings.TrimSpace(r.Mail.Body) == "" {
		return connector.Mail{}, pdk.Errorf("invalid", "a channel message needs a body")
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Mail{}, err
	}
	body, err := json.Marshal(map[string]any{"subject": r.Mail.Subject, "body": itemBody{ContentType: "text", Content: r.Mail.Body}})
	if err != nil {
		return connector.Mail{}, err
	}
	var m chatMessage
	if _, err := c.do("POST", c.base+channelAPI(team, ch), body, map[string]string{"Content-Type": "application/json"}, &m); err != nil {
		return connector.Mail{}, err
	}
	if m.ID == "" {
		return connector.Mail{}, pdk.Errorf("bad_response", "Microsoft Graph stored no channel message")
	}
	out := r.Mail
	out.ID, out.Date, out.From = m.ID, graphTime(m.CreatedDateTime), sender(m)
	return out, nil
}

// ListMail lists a channel's messages (folder "{team id}/{channel id}").
func (teams) ListMail(r connector.ListMailRequest) (connector.MailList, error) {
	team, ch, err := channelPath(r.Folder)
	if err != nil {
		return connector.MailList{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.MailList{}, err
	}
	pg, err := list[chatMessage](c, channelAPI(team, ch), top(min(pageSize(r.Limit), 50)), r.Cursor)
	if err != nil {
		return connector.MailList{}, err
	}
	out := connector.MailList{Messages: []connector.Mail{}, Next: pg.NextLink}
	for _, m := range pg.Value {
		out.Messages = append(out.Messages, connector.Mail{ID: m.ID, From: sender(m), To: []string{team + "/" + ch}, Subject: m.Subject, Body: plain(m.Body), Date: graphTime(m.CreatedDateTime)})
	}
	return out, nil
}
