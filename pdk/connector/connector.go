// Package connector is what a connector plugin is written against: the
// operations every service of a provider offers (browse, download, upload,
// search; mail send and list for mail services) as Go interfaces. A
// connector is one package: it implements an adapter per service of its
// provider, calls
// Serve in init, and sends its HTTP requests with pdk/connection, which
// carries the user's connection without the plugin ever holding its
// credentials. Its plugin.json has kind "connector", the capability
// "connection" and a connector section naming the provider, the services,
// the hosts and the auth scheme.
package connector

import (
	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector/wire"
)

type (
	// Target names the connection and service of a request.
	Target = wire.Target
	// Entry is an item of an external service.
	Entry = wire.Entry
	// BrowseRequest lists a path.
	BrowseRequest = wire.BrowseRequest
	// Listing is a page of entries.
	Listing = wire.Listing
	// DownloadRequest fetches a file.
	DownloadRequest = wire.DownloadRequest
	// File is a downloaded file.
	File = wire.File
	// UploadRequest stores a file.
	UploadRequest = wire.UploadRequest
	// SearchRequest searches a service.
	SearchRequest = wire.SearchRequest
	// Mail is a message.
	Mail = wire.Mail
	// SendMailRequest sends a message.
	SendMailRequest = wire.SendMailRequest
	// ListMailRequest lists messages.
	ListMailRequest = wire.ListMailRequest
	// MailList is a page of messages.
	MailList = wire.MailList
)

// ServiceAdapter is one service of a provider (SharePoint, Drive, Jira
// issues). An operation the service does not have returns
// ErrUnsupported.
type ServiceAdapter interface {
	Browse(BrowseRequest) (Listing, error)
	Download(DownloadRequest) (File, error)
	Upload(UploadRequest) (Entry, error)
	Search(SearchRequest) (Listing, error)
}

// MailAdapter is a mail service's extra operations.
type MailAdapter interface {
	SendMail(SendMailRequest) (Mail, error)
	ListMail(ListMailRequest) (MailList, error)
}

// ErrUnsupported answers an operation a service does not offer.
func ErrUnsupported(service, op string) error {
	return pdk.Errorf("unsupported", "service %s has no %s", service, op)
}

// Serve registers the connector's tools, dispatching each call to the
// adapter of the service it names. Adapters that also implement
// MailAdapter get sendMail and listMail.
func Serve(adapters map[string]ServiceAdapter) {
	pick := func(t Target) (ServiceAdapter, error) {
		a, ok := adapters[t.Service]
		if !ok {
			return nil, pdk.Errorf("unknown_service", "this connector has no service %q", t.Service)
		}
		return a, nil
	}
	pdk.Tool(wire.ToolBrowse, "Lists the entries under a path of a service.", func(r BrowseRequest) (Listing, error) {
		a, err := pick(r.Target())
		if err != nil {
			return Listing{}, err
		}
		return a.Browse(r)
	}, pdk.ReadOnly())
	pdk.Tool(wire.ToolDownload, "Downloads one file of a service.", func(r DownloadRequest) (File, error) {
		a, err := pick(r.Target())
		if err != nil {
			return File{}, err
		}
		return a.Download(r)
	}, pdk.ReadOnly())
	pdk.Tool(wire.ToolUpload, "Uploads a file to a service.", func(r UploadRequest) (Entry, error) {
		a, err := pick(r.Target())
		if err != nil {
			return Entry{}, err
		}
		return a.Upload(r)
	}, pdk.External("upload"))
	pdk.Tool(wire.ToolSearch, "Searches a service.", func(r SearchRequest) (Listing, error) {
		a, err := pick(r.Target())
		if err != nil {
			return Listing{}, err
		}
		return a.Search(r)
	}, pdk.ReadOnly())
	mail := false
	for _, a := range adapters {
		if _, ok := a.(MailAdapter); ok {
			mail = true
		}
	}
	if !mail {
		return
	}
	pickMail := func(t Target) (MailAdapter, error) {
		a, err := pick(t)
		if err != nil {
			return nil, err
		}
		m, ok := a.(MailAdapter)
		if !ok {
			return nil, pdk.Errorf("unsupported", "service %s is not a mail service", t.Service)
		}
		return m, nil
	}
	pdk.Tool(wire.ToolSendMail, "Sends a message.", func(r SendMailRequest) (Mail, error) {
		m, err := pickMail(r.Target())
		if err != nil {
			return Mail{}, err
		}
		return m.SendMail(r)
	}, pdk.External("mail"))
	pdk.Tool(wire.ToolListMail, "Lists messages of a mail folder.", func(r ListMailRequest) (MailList, error) {
		m, err := pickMail(r.Target())
		if err != nil {
			return MailList{}, err
		}
		return m.ListMail(r)
	}, pdk.ReadOnly())
}
