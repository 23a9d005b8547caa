package main

import (
	"strings"
	"time"
)

// page is a Graph collection: its values and the link of the next page.
type page[T any] struct {
	Value    []T    `json:"value"`
	NextLink string `json:"@odata.nextLink"`
}

// graphError is Graph's error body.
type graphError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// site is a SharePoint site.
type site struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	DisplayName    string `json:"displayName"`
	WebURL         string `json:"webUrl"`
	SiteCollection struct {
		Hostname string `json:"hostname"`
	} `json:"siteCollection"`
}

// drive is a document library or a OneDrive.
type drive struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	DriveType string `json:"driveType"`
	WebURL    string `json:"webUrl"`
}

// driveItem is a file or folder of a drive.
type driveItem struct {
	ID                   string `json:"id"`
	Name                 string `json:"name"`
	Size                 int64  `json:"size"`
	WebURL               string `json:"webUrl"`
	LastModifiedDateTime string `json:"lastModifiedDateTime"`
	ParentReference      struct {
		DriveID string `json:"driveId"`
		ID      string `json:"id"`
		Path    string `json:"path"`
	} `json:"parentReference"`
	Folder *struct {
		ChildCount int `json:"childCount"`
	} `json:"folder"`
	File *struct {
		MIMEType string `json:"mimeType"`
	} `json:"file"`
	Root *struct{} `json:"root"`
}

// emailAddress is a recipient or sender.
type emailAddress struct {
	EmailAddress struct {
		Name    string `json:"name,omitempty"`
		Address string `json:"address"`
	} `json:"emailAddress"`
}

// itemBody is a message's or event's body.
type itemBody struct {
	ContentType string `json:"contentType"`
	Content     string `json:"content"`
}

// message is an Outlook message.
type message struct {
	ID               string         `json:"id"`
	Subject          string         `json:"subject"`
	BodyPreview      string         `json:"bodyPreview"`
	Body             itemBody       `json:"body"`
	From             *emailAddress  `json:"from"`
	ToRecipients     []emailAddress `json:"toRecipients"`
	CcRecipients     []emailAddress `json:"ccRecipients"`
	ReceivedDateTime string         `json:"receivedDateTime"`
	WebLink          string         `json:"webLink"`
}

// mailFolder is an Outlook mail folder.
type mailFolder struct {
	ID             string `json:"id"`
	DisplayName    string `json:"displayName"`
	TotalItemCount int    `json:"totalItemCount"`
}

// dateTimeTimeZone is an event's start or end.
type dateTimeTimeZone struct {
	DateTime string `json:"dateTime"`
	TimeZone string `json:"timeZone"`
}

// event is a calendar event.
type event struct {
	ID       string           `json:"id"`
	Subject  string           `json:"subject"`
	Start    dateTimeTimeZone `json:"start"`
	End      dateTimeTimeZone `json:"end"`
	Location struct {
		DisplayName string `json:"displayName"`
	} `json:"location"`
	WebLink string `json:"webLink"`
}

// team is a team the user joined.
type team struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
}

// channel is a team's channel.
type channel struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	WebURL      string `json:"webUrl"`
}

// chatMessage is a channel message.
type chatMessage struct {
	ID              string   `json:"id"`
	CreatedDateTime string   `json:"createdDateTime"`
	Subject         string   `json:"subject"`
	Body            itemBody `json:"body"`
	From            *struct {
		User *struct {
			DisplayName string `json:"displayName"`
		} `json:"user"`
	} `json:"from"`
	WebURL string `json:"webUrl"`
}

// graphTime parses Graph's timestamps (RFC 3339, or an event's
// 2026-11-26T09:00:00.0000000 in its time zone, taken as UTC when it is).
func graphTime(s string) time.Time {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC()
	}
	if t, err := time.Parse("2006-01-02T15:04:05.9999999", s); err == nil {
		return t
	}
	return time.Time{}
}

// plain is a body as text: HTML tags dropped, whitespace folded.
func plain(b itemBody) string {
	s := b.Content
	if strings.EqualFold(b.ContentType, "html") {
		var out strings.Builder
		in := false
		for _, r := range s {
			switch {
			case r == '<':
				in = true
			case r == '>':
				in = false
				out.WriteByte(' ')
			case !in:
				out.WriteRune(r)
			}
		}
		s = out.String()
	}
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
