package main

import (
	"github.com/agenthost/agenthost/pdk/connector"
)

// onedrive is the service "onedrive": the signed-in user's drive
// (/me/drive). Paths are folders and files below its root: "" (the
// root), "Reports", "Reports/q3.pdf".
type onedrive struct{}

var me = driveRef{api: "/me/drive"}

func (onedrive) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	segs, err := segments(r.Path)
	if err == nil {
		err = driveSegments(segs)
	}
	if err != nil {
		return connector.Listing{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	return c.browseDrive(me, segs, r.Cursor, r.Limit)
}

func (onedrive) Download(r connector.DownloadRequest) (connector.File, error) {
	segs, err := segments(r.Path)
	if err == nil {
		err = driveSegments(segs)
	}
	if err != nil {
		return connector.File{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.File{}, err
	}
	return c.downloadDrive(me, segs, r.MaxBytes)
}

func (onedrive) Upload(r connector.UploadRequest) (connector.Entry, error) {
	if err := itemName(r.Name); err != nil {
		return connector.Entry{}, err
	}
	segs, err := segments(r.Path)
	if err == nil {
		err = driveSegments(segs)
	}
	if err != nil {
		return connector.Entry{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Entry{}, err
	}
	return c.uploadDrive(me, segs, r)
}

func (onedrive) Search(r connector.SearchRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	return c.searchDrive(me, r.Query, r.Cursor, r.Limit)
}
