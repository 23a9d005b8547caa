package api

import (
	"context"
	"fmt"
	"mime"
	"mime/multipart"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/agenthost/agenthost/host/audit"
	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/host/tenancy"
)

// Workspaces is what the API needs to list a principal's workspaces.
type Workspaces interface {
	Workspaces(ctx context.Context, p tenancy.Principal) ([]tenancy.Workspace, error)
	// Levels is the principal's access to a workspace; ErrNotFound when it
	// is not the principal's to see.
	Levels(ctx context.Context, p tenancy.Principal, workspaceID string) (read, write tenancy.Level, err error)
}

func handleWorkspaces(ws Workspaces) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := ws.Workspaces(c.UserContext(), principal(c))
		if err != nil {
			return err
		}
		if out == nil {
			out = []tenancy.Workspace{}
		}
		return c.JSON(out)
	}
}

// uploadResult is an uploaded file, flagged when it was already there.
type uploadResult struct {
	filemeta.Item
	Existing bool `json:"existing"`
	// Index is the file's index state after the password given with it
	// was used (absent without one).
	Index *uploadIndex `json:"index,omitempty"`
}

// uploadIndex is an upload's index state when it came with a password.
type uploadIndex struct {
	Status kindex.Status `json:"status,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// handleUpload stores the multipart part "file" (fields: folderId, tags as
// repeated or comma-separated values, description, noDedupe, password: of
// an encrypted file, which is then indexed with it before the answer).
func handleUpload(svc *files.Service, passwords FilePasswords, rec audit.Recorder) fiber.Handler {
	return func(c *fiber.Ctx) error {
		form, err := c.MultipartForm()
		if err != nil {
			return fmt.Errorf("%w: want a multipart/form-data body with a part named \"file\": %v", tenancy.ErrInvalid, err)
		}
		defer form.RemoveAll()
		parts := form.File["file"]
		if len(parts) != 1 {
			return fmt.Errorf("%w: want exactly one part named \"file\", got %d", tenancy.ErrInvalid, len(parts))
		}
		fh := parts[0]
		name := rawFilename(fh)
		content, err := fh.Open()
		if err != nil {
			return err
		}
		defer content.Close()
		u := files.Upload{
			WorkspaceID: c.Params("ws"),
			Name:        name,
			MIMEType:    fh.Header.Get("Content-Type"),
			FolderID:    formValue(form, "folderId"),
			Tags:        splitList(form.Value["tags"]),
			Description: formValue(form, "description"),
			NoDedupe:    formValue(form, "noDedupe") == "true",
			Content:     content,
		}
		if u.MIMEType == "application/octet-stream" {
			u.MIMEType = "" // browsers say this when they do not know; we detect
		}
		// The password of an encrypted file, given with it: used once its
		// first indexing found it encrypted, kept nowhere (see
		// handleFilePassword).
		password := formValue(form, "password")
		if len(form.Value["password"]) > 0 {
			form.Value["password"] = nil
		}
		if password != "" && passwords == nil {
			return fmt.Errorf("%w: this server takes no file passwords", tenancy.ErrInvalid)
		}
		item, existing, err := svc.Upload(c.UserContext(), principal(c), u)
		if err != nil {
			return err
		}
		status := fiber.StatusCreated
		if existing {
			status = fiber.StatusOK
		}
		res := uploadResult{Item: item, Existing: existing}
		if password != "" {
			st, err := passwords.UnlockWhenSettled(c.UserContext(), principal(c), item.ID, password)
			password = ""
			res.Index = &uploadIndex{}
			if err != nil {
				// The file is stored; the password can be given again on it.
				res.Index.Error = err.Error()
			} else {
				res.Index.Status, res.Index.Error = unlock.ShownStatus(st.Status, st.Error), st.Error
			}
			auditPassword(c, rec, item.ID, st, err)
		}
		return c.Status(status).JSON(res)
	}
}

// rawFilename is the part's filename as the client sent it. Go's multipart
// reader keeps only the last path element ("../../x" becomes "x"); we want
// the original, so that a name with path tricks is refused with a clear
// error instead of being silently renamed.
func rawFilename(fh *multipart.FileHeader) string {
	if _, params, err := mime.ParseMediaType(fh.Header.Get("Content-Disposition")); err == nil {
		if name, ok := params["filename"]; ok {
			return name
		}
	}
	return fh.Filename
}

func formValue(f *multipart.Form, key string) string {
	if v := f.Value[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// splitList accepts repeated values and comma-separated ones.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// handleListFiles: GET /files?workspace=&folder=&tag=&mime=&name=&status=&order=&limit=&cursor=
// (folder=root lists files in no folder).
func handleListFiles(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		flt := filemeta.Filter{
			WorkspaceID: c.Query("workspace"),
			MIMEType:    c.Query("mime"),
			Name:        c.Query("name"),
			Status:      filemeta.Status(c.Query("status")),
			Order:       filemeta.Order(c.Query("order")),
			Cursor:      c.Query("cursor"),
		}
		args := c.Request().URI().QueryArgs()
		for _, v := range args.PeekMulti("tag") {
			flt.Tags = append(flt.Tags, splitList([]string{string(v)})...)
		}
		if f := c.Query("folder"); f != "" {
			if f == "root" {
				f = ""
			}
			flt.Folder = &f
		}
		var err error
		if flt.Limit, err = queryLimit(c, maxListLimit); err != nil {
			return err
		}
		page, err := svc.List(c.UserContext(), principal(c), flt)
		if err != nil {
			return err
		}
		return c.JSON(page)
	}
}

// fileView is GET /files/{id}'s answer: the file and who uploaded it, by
// name, for the file's detail view (createdBy is a user id nobody reads).
type fileView struct {
	filemeta.Item
	CreatedByName string `json:"createdByName,omitempty"`
}

func handleGetFile(svc *files.Service, names ownerNames) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := principal(c)
		f, err := svc.Get(c.UserContext(), p, c.Params("id"))
		if err != nil {
			return err
		}
		v := fileView{Item: f}
		if f.CreatedBy != "" && names != nil {
			// The reader may read the file, so they may know who uploaded
			// it; a lookup that fails (a person since removed) leaves the
			// name out, not the answer.
			if o, err := names.Person(c.UserContext(), p.TenantID, f.CreatedBy); err == nil {
				v.CreatedByName = strings.TrimSpace(o.Name)
				if v.CreatedByName == "" {
					v.CreatedByName = o.Email
				}
			}
		}
		return c.JSON(v)
	}
}

// handleFileContent streams a file's bytes.
func handleFileContent(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		f, r, err := svc.Open(c.UserContext(), principal(c), c.Params("id"))
		if err != nil {
			return err
		}
		setStoredContentHeaders(c, f.MIMEType, f.Name)
		return sendBlob(c, r, `"`+f.SHA256+`"`)
	}
}

// storedContentCSP is the policy of every response carrying a stored file's
// bytes. An upload is anybody's content served from the UI's origin: opened
// directly, an HTML, SVG or JavaScript upload would otherwise run with the
// signed-in person's session. sandbox gives the document an opaque origin
// and no scripts; default-src 'none' lets it load nothing. An <img> of the
// file (the UI's image preview) is unaffected: a response's policy governs
// only a document it renders.
const storedContentCSP = "default-src 'none'; sandbox; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// setStoredContentHeaders sets the headers of a response carrying a stored
// file's bytes: its type as recorded, never sniffed into another (a text file
// holding markup stays text), a policy that runs nothing it contains, and a
// download rather than a page.
func setStoredContentHeaders(c *fiber.Ctx, mimeType, name string) {
	c.Set(fiber.HeaderContentType, mimeType)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Content-Security-Policy", storedContentCSP)
	c.Set("Cross-Origin-Resource-Policy", "same-origin")
	disposition := "attachment"
	if name != "" {
		disposition += `; filename*=UTF-8''` + urlPathEscape(name)
	}
	c.Set(fiber.HeaderContentDisposition, disposition)
}

// fileUpdate is the JSON body of PATCH /files/:id.
type fileUpdate struct {
	Name        *string          `json:"name"`
	Description *string          `json:"description"`
	Status      *filemeta.Status `json:"status"`
	FolderID    *string          `json:"folderId"`
	AddTags     []string         `json:"addTags"`
	RemoveTags  []string         `json:"removeTags"`
	Shared      *bool            `json:"shared"`
}

func handleUpdateFile(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var u fileUpdate
		if err := decodeJSON(c, &u); err != nil {
			return err
		}
		f, err := svc.Update(c.UserContext(), principal(c), c.Params("id"), filemeta.Update{
			Name: u.Name, Description: u.Description, Status: u.Status, Folder: u.FolderID,
			AddTags: u.AddTags, RemoveTags: u.RemoveTags, Shared: u.Shared,
		})
		if err != nil {
			return err
		}
		return c.JSON(f)
	}
}

func handleDeleteFile(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := svc.Delete(c.UserContext(), principal(c), c.Params("id")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

func handleListFolders(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		out, err := svc.Folders(c.UserContext(), principal(c), c.Params("ws"))
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

// folderRequest is the JSON body of POST and PATCH on folders.
type folderRequest struct {
	Name     *string `json:"name"`
	ParentID *string `json:"parentId"`
	AutoRule *string `json:"autoRule"`
}

func handleCreateFolder(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r folderRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		f := filemeta.Folder{WorkspaceID: c.Params("ws")}
		if r.Name != nil {
			f.Name = *r.Name
		}
		if r.ParentID != nil {
			f.ParentID = *r.ParentID
		}
		if r.AutoRule != nil {
			f.AutoRule = *r.AutoRule
		}
		out, err := svc.CreateFolder(c.UserContext(), principal(c), f)
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusCreated).JSON(out)
	}
}

func handleUpdateFolder(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		var r folderRequest
		if err := decodeJSON(c, &r); err != nil {
			return err
		}
		out, err := svc.UpdateFolder(c.UserContext(), principal(c), c.Params("id"), filemeta.FolderUpdate{Name: r.Name, Parent: r.ParentID, AutoRule: r.AutoRule})
		if err != nil {
			return err
		}
		return c.JSON(out)
	}
}

func handleDeleteFolder(svc *files.Service) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := svc.DeleteFolder(c.UserContext(), principal(c), c.Params("id")); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}
