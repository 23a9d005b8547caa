package main

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/agenthost/agenthost/pdk"
	"github.com/agenthost/agenthost/pdk/connector"
)

// sharepoint is the service "sharepoint". Paths name a site, one of its
// document libraries and a folder or file in it:
//
//	""                                                  the sites the user follows
//	{hostname}/sites/{site}                             the site's libraries
//	{hostname}/sites/{site}/{library}/{folder…}/{file}  a library's folders and files
//
// {hostname} is e.g. contoso.sharepoint.com; "teams/{site}" works like
// "sites/{site}", and a path without "sites/…" after the hostname is the
// hostname's root site. A path may start at "sites/{site}" (as
// "/sites/MySite/Documents/Reports"): the hostname is then the tenant's
// (its root site's). Search takes "{site path}: words" to search a site's
// library (its default library when the path names none), or just words
// for the tenant's root site.
type sharepoint struct{}

var hostname = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))+$`)

// spPath is a parsed SharePoint path.
type spPath struct {
	host    string
	site    []string // nil for the host's root site, else ["sites", name]
	library string
	rest    []string
}

func (p spPath) sitePath() string { return join(append([]string{p.host}, p.site...)...) }

// siteAPI addresses the site: /sites/{hostname} or /sites/{hostname}:/sites/{name}:
func (p spPath) siteAPI() string {
	if len(p.site) == 0 {
		return "/sites/" + url.PathEscape(p.host)
	}
	return "/sites/" + url.PathEscape(p.host) + ":/" + escape(p.site) + ":"
}

func (c *client) parseSP(segs []string) (spPath, error) {
	var p spPath
	i := 0
	if segs[0] == "sites" || segs[0] == "teams" {
		var root site
		if err := c.get("/sites/root", url.Values{"$select": {"id,siteCollection,webUrl"}}, &root); err != nil {
			return p, err
		}
		p.host = strings.ToLower(root.SiteCollection.Hostname)
		if !hostname.MatchString(p.host) {
			return p, pdk.Errorf("bad_response", "Microsoft Graph named the tenant's host %q", root.SiteCollection.Hostname)
		}
	} else {
		p.host = strings.ToLower(segs[0])
		if !hostname.MatchString(p.host) {
			return p, pdk.Errorf("invalid_path", "%q is not a SharePoint host name (e.g. contoso.sharepoint.com/sites/Team/Documents)", segs[0])
		}
		i = 1
	}
	if i < len(segs) && (segs[i] == "sites" || segs[i] == "teams") {
		if i+1 >= len(segs) {
			return p, pdk.Errorf("invalid_path", "name the site after %s/ (e.g. %s/sites/Team)", segs[i], p.host)
		}
		p.site = segs[i : i+2]
		i += 2
	}
	if i < len(segs) {
		if err := itemName(segs[i]); err != nil {
			return p, err
		}
		p.library = segs[i]
		p.rest = segs[i+1:]
		if err := driveSegments(p.rest); err != nil {
			return p, err
		}
	}
	return p, nil
}

// library finds the site's document library by name (or its default
// library for ""), following at most maxPages pages of libraries.
func (c *client) library(p spPath) (driveRef, error) {
	if p.library == "" {
		var d drive
		if err := c.get(p.siteAPI()+"/drive", nil, &d); err != nil {
			return driveRef{}, err
		}
		if d.ID == "" || itemName(d.Name) != nil {
			return driveRef{}, pdk.Errorf("bad_response", "Microsoft Graph answered a library without an id or name")
		}
		return driveRef{api: "/drives/" + url.PathEscape(d.ID), prefix: join(p.sitePath(), d.Name)}, nil
	}
	cursor := ""
	for range maxPages {
		pg, err := list[drive](c, p.siteAPI()+"/drives", nil, cursor)
		if err != nil {
			return driveRef{}, err
		}
		for _, d := range pg.Value {
			if strings.EqualFold(d.Name, p.library) && d.ID != "" {
				if itemName(d.Name) != nil {
					return driveRef{}, pdk.Errorf("bad_response", "Microsoft Graph named a library %q", d.Name)
				}
				return driveRef{api: "/drives/" + url.PathEscape(d.ID), prefix: join(p.sitePath(), d.Name)}, nil
			}
		}
		if cursor = pg.NextLink; cursor == "" {
			break
		}
	}
	return driveRef{}, pdk.Errorf("not_found", "site %s has no library %q (browse %s to see its libraries)", p.sitePath(), p.library, p.sitePath())
}

// sitePathOf is a site's path in this scheme, from its webUrl.
func sitePathOf(s site) (string, bool) {
	u, err := url.Parse(s.WebURL)
	if err != nil || !hostname.MatchString(strings.ToLower(u.Hostname())) {
		return "", false
	}
	segs, err := segments(u.Path)
	if err != nil || !(len(segs) == 0 || len(segs) == 2 && (segs[0] == "sites" || segs[0] == "teams")) {
		return "", false
	}
	return join(append([]string{strings.ToLower(u.Hostname())}, segs...)...), true
}

func (sharepoint) Browse(r connector.BrowseRequest) (connector.Listing, error) {
	segs, err := segments(r.Path)
	if err != nil {
		return connector.Listing{}, err
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	out := connector.Listing{Entries: []connector.Entry{}}
	if len(segs) == 0 {
		pg, err := list[site](c, "/me/followedSites", nil, r.Cursor)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, s := range pg.Value {
			if p, ok := sitePathOf(s); ok {
				out.Entries = append(out.Entries, connector.Entry{ID: s.ID, Name: s.DisplayName, Path: p, Folder: true, WebURL: s.WebURL, Summary: "site"})
			}
		}
		out.Next = pg.NextLink
		return out, nil
	}
	p, err := c.parseSP(segs)
	if err != nil {
		return connector.Listing{}, err
	}
	if p.library == "" {
		pg, err := list[drive](c, p.siteAPI()+"/drives", nil, r.Cursor)
		if err != nil {
			return connector.Listing{}, err
		}
		for _, d := range pg.Value {
			if d.ID != "" && itemName(d.Name) == nil {
				out.Entries = append(out.Entries, connector.Entry{ID: d.ID, Name: d.Name, Path: join(p.sitePath(), d.Name), Folder: true, WebURL: d.WebURL, Summary: "document library"})
			}
		}
		out.Next = pg.NextLink
		return out, nil
	}
	d, err := c.library(p)
	if err != nil {
		return connector.Listing{}, err
	}
	return c.browseDrive(d, p.rest, r.Cursor, r.Limit)
}

func (sharepoint) Download(r connector.DownloadRequest) (connector.File, error) {
	segs, err := segments(r.Path)
	if err != nil {
		return connector.File{}, err
	}
	if len(segs) == 0 {
		return connector.File{}, pdk.Errorf("invalid_path", "name a file: {hostname}/sites/{site}/{library}/{folder…}/{file}")
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.File{}, err
	}
	p, err := c.parseSP(segs)
	if err != nil {
		return connector.File{}, err
	}
	if p.library == "" || len(p.rest) == 0 {
		return connector.File{}, pdk.Errorf("invalid_path", "%s is a site or a library, not a file", r.Path)
	}
	d, err := c.library(p)
	if err != nil {
		return connector.File{}, err
	}
	return c.downloadDrive(d, p.rest, r.MaxBytes)
}

func (sharepoint) Upload(r connector.UploadRequest) (connector.Entry, error) {
	if err := itemName(r.Name); err != nil {
		return connector.Entry{}, err
	}
	segs, err := segments(r.Path)
	if err != nil {
		return connector.Entry{}, err
	}
	if len(segs) == 0 {
		return connector.Entry{}, pdk.Errorf("invalid_path", "upload to a library's folder: {hostname}/sites/{site}/{library}/{folder…}")
	}
	if r.Size > maxUpload {
		return connector.Entry{}, pdk.Errorf("too_large", "%s is %d bytes, over Graph's file size limit of %d", r.Name, r.Size, int64(maxUpload))
	}
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Entry{}, err
	}
	p, err := c.parseSP(segs)
	if err != nil {
		return connector.Entry{}, err
	}
	if p.library == "" {
		return connector.Entry{}, pdk.Errorf("invalid_path", "upload into a library of %s, not the site itself", p.sitePath())
	}
	d, err := c.library(p)
	if err != nil {
		return connector.Entry{}, err
	}
	return c.uploadDrive(d, p.rest, r)
}

func (sharepoint) Search(r connector.SearchRequest) (connector.Listing, error) {
	c, err := newClient(r.Connection)
	if err != nil {
		return connector.Listing{}, err
	}
	scope, words, scoped := strings.Cut(r.Query, ":")
	if !scoped {
		scope, words = "", r.Query
	}
	segs, err := segments(strings.TrimSpace(scope))
	if err != nil {
		return connector.Listing{}, err
	}
	var d driveRef
	if len(segs) == 0 {
		var root site
		if err := c.get("/sites/root", url.Values{"$select": {"id,siteCollection,webUrl"}}, &root); err != nil {
			return connector.Listing{}, err
		}
		segs = []string{strings.ToLower(root.SiteCollection.Hostname)}
	}
	p, err := c.parseSP(segs)
	if err != nil {
		return connector.Listing{}, err
	}
	if d, err = c.library(p); err != nil {
		return connector.Listing{}, err
	}
	if len(p.rest) > 0 {
		return connector.Listing{}, pdk.Errorf("invalid", "search a site or a library (%s), not a folder", join(p.sitePath(), p.library))
	}
	return c.searchDrive(d, words, r.Cursor, r.Limit)
}
