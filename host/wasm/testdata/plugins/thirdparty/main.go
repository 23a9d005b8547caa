// Command thirdparty is a connector as a third party writes it: one
// package against pdk/connector and pdk/connection, no credentials in
// sight. Provider acme: "drive" (GET /v1/files, GET /v1/files/{id}) and
// "mail" (POST /v1/mail, GET /v1/mail).
package main

import (
	"encoding/json"
	"net/url"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connection"
	"github.com/agenthost/agenthost/pdk/connector"
)

const api = "http://api.acme.test"

func main() {}

func init() {
	connector.Serve(map[string]connector.ServiceAdapter{"drive": drive{}, "mail": mail{}})
}

// get sends a request through the connection and decodes a JSON answer.
func call(conn, method, path string, body []byte, out any) ([]byte, error) {
	info, err := connection.Info(conn)
	if err != nil {
		return nil, err
	}
	base := info.BaseURL
	if base == "" {
		base = api
	}
	resp, err := connection.Do(connection.Request{Connection: conn, Method: method, URL: base + path, Body: body,
		Headers: map[string]string{"Content-Type": "application/json"}})
	if err != nil {
		return nil, err
	}
	if resp.Status != 200 {
		return nil, pdk.Errorf("provider_error", "HTTP %d: %s", resp.Status, resp.Body)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return nil, pdk.Errorf("bad_response", "%v", err)
		}
	}
	return resp.Body, nil
}

type drive struct{}

func (drive) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	var files []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if _, err := call(r.Connection, "GET", "/v1/files", nil, &files); err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	for _, f := range files {
		out.Entries = append(out.Entries, connector.Entry{ID: f.ID, Name: f.Name, Path: f.ID})
	}
	return out, nil
}

func (drive) Download(r connector.DownloadRequest) (connector.File, error) {
	b, err := call(r.Connection, "GET", "/v1/files/"+url.PathEscape(r.Path), nil, nil)
	if err != nil {
		return connector.File{}, err
	}
	return connector.File{Name: r.Path + ".txt", MIMEType: "text/plain", Data: b}, nil
}

func (drive) Upload(connector.UploadRequest) (connector.Entry, error) {
	return connector.Entry{}, connector.ErrUnsupported("drive", "upload")
}

func (drive) Search(connector.SearchRequest) (connector.Listing, error) {
	return connector.Listing{}, connector.ErrUnsupported("drive", "search")
}

type mail struct{ drive }

func (mail) SendMail(r connector.SendMailRequest) (connector.Mail, error) {
	body, _ := json.Marshal(r.Mail)
	var sent connector.Mail
	_, err := call(r.Connection, "POST", "/v1/mail", body, &sent)
	return sent, err
}

func (mail) ListMail(r connector.ListMailRequest) (connector.MailList, error) {
	var out connector.MailList
	_, err := call(r.Connection, "GET", "/v1/mail", nil, &out)
	return out, err
}
