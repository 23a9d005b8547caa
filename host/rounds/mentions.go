package rounds

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/files/filemeta"
	"github.com/agenthost/agenthost/host/tenancy"
)

// MaxMentions bounds the @references of one prompt that are resolved.
const MaxMentions = 20

// Mention is an @reference of a prompt ("@report.pdf",
// "@folder/") and what it names in the caller's workspace.
type Mention struct {
	// Text is the name as written (without the @).
	Text string
	// Folder: the mention ends in "/" (or names no file but a folder).
	Folder bool
	// Files and Folders are the matches the caller can read; more than one
	// is ambiguous, none is missing.
	Files   []filemeta.Item
	Folders []filemeta.Folder
	// Contents lists (a page of) a matched folder's files.
	Contents []filemeta.Item
}

// ParseMentions finds the @references in a prompt: "@name" up to the next
// white space (trailing punctuation dropped) or @"a name with spaces". An @
// inside a word (an e-mail address) is not one.
func ParseMentions(prompt string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(prompt) && len(out) < MaxMentions; i++ {
		if prompt[i] != '@' {
			continue
		}
		if i > 0 {
			prev, _ := utf8.DecodeLastRuneInString(prompt[:i])
			if !unicode.IsSpace(prev) && !strings.ContainsRune("([{\"'«", prev) {
				continue
			}
		}
		rest := prompt[i+1:]
		var name string
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				continue
			}
			name = rest[1 : 1+end]
		} else {
			end := strings.IndexFunc(rest, unicode.IsSpace)
			if end < 0 {
				end = len(rest)
			}
			name = strings.TrimRight(rest[:end], ".,;:!?)]}\"'»")
		}
		name = strings.TrimSpace(name)
		if name == "" || len(name) > 1000 || seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, name)
	}
	return out
}

// ResolveMentions looks each @reference up among the files and folders of
// the workspace that p can read: never another workspace's, never a file
// outside p's access. A name ending in "/" is a folder path ("Reports/2024/").
func ResolveMentions(ctx context.Context, fs *files.Service, p tenancy.Principal, workspaceID, prompt string) ([]Mention, error) {
	names := ParseMentions(prompt)
	if len(names) == 0 {
		return nil, nil
	}
	folders, err := fs.Folders(ctx, p, workspaceID)
	if err != nil {
		return nil, err
	}
	out := make([]Mention, 0, len(names))
	for _, n := range names {
		m := Mention{Text: n, Folder: strings.HasSuffix(n, "/")}
		if !m.Folder {
			glob := strings.NewReplacer("*", "?", "?", "?").Replace(n)
			page, err := fs.List(ctx, p, filemeta.Filter{WorkspaceID: workspaceID, Name: glob, Limit: 50, Order: filemeta.OrderName})
			if err != nil {
				return nil, err
			}
			for _, f := range page.Items {
				if f.Name == n {
					m.Files = append(m.Files, f)
				}
			}
			if len(m.Files) == 0 {
				// Names are matched exactly, then ignoring case.
				for _, f := range page.Items {
					if strings.EqualFold(f.Name, n) {
						m.Files = append(m.Files, f)
					}
				}
			}
		}
		if len(m.Files) == 0 {
			m.Folders = folderByPath(folders, strings.TrimSuffix(n, "/"))
			m.Folder = m.Folder || len(m.Folders) > 0
		}
		if len(m.Folders) == 1 {
			id := m.Folders[0].ID
			page, err := fs.List(ctx, p, filemeta.Filter{WorkspaceID: workspaceID, Folder: &id, Limit: 20, Order: filemeta.OrderName})
			if err != nil {
				return nil, err
			}
			m.Contents = page.Items
		}
		out = append(out, m)
	}
	return out, nil
}

// folderByPath finds the folders whose path from the root is path ("a/b"),
// or, for a single name, every folder of that name.
func folderByPath(folders []filemeta.Folder, path string) []filemeta.Folder {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	els := strings.Split(path, "/")
	var out []filemeta.Folder
	if len(els) == 1 {
		for _, f := range folders {
			if f.Name == els[0] {
				out = append(out, f)
			}
		}
		return out
	}
	parent := ""
	var cur filemeta.Folder
	for _, el := range els {
		found := false
		for _, f := range folders {
			if f.ParentID == parent && f.Name == el {
				cur, parent, found = f, f.ID, true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return []filemeta.Folder{cur}
}

// MentionsNote tells the model what the prompt's @references name, by the
// ids its tools take, and says plainly when one names nothing or several.
func MentionsNote(ms []Mention) string {
	if len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nReferences in the prompt (@name):")
	for _, m := range ms {
		switch {
		case len(m.Files) == 1:
			f := m.Files[0]
			fmt.Fprintf(&b, "\n- @%s: file %s (file id %s, %s, %d bytes, version %d)", m.Text, f.Name, f.ID, f.MIMEType, f.Size, max(1, f.Version))
		case len(m.Files) > 1:
			fmt.Fprintf(&b, "\n- @%s is ambiguous: %d files have this name:", m.Text, len(m.Files))
			for _, f := range m.Files {
				fmt.Fprintf(&b, " %s (file id %s, %d bytes);", f.Name, f.ID, f.Size)
			}
			b.WriteString(" ask the user which one is meant, or use getFileInfo on each.")
		case len(m.Folders) == 1:
			fo := m.Folders[0]
			fmt.Fprintf(&b, "\n- @%s: folder %s (folder id %s)", m.Text, fo.Name, fo.ID)
			if len(m.Contents) == 0 {
				b.WriteString(", no files in it")
			} else {
				b.WriteString(", files:")
				for _, f := range m.Contents {
					fmt.Fprintf(&b, " %s (file id %s);", f.Name, f.ID)
				}
				if len(m.Contents) == 20 {
					b.WriteString(" … (listFiles with the folder lists all)")
				}
			}
		case len(m.Folders) > 1:
			fmt.Fprintf(&b, "\n- @%s is ambiguous: %d folders have this name:", m.Text, len(m.Folders))
			for _, fo := range m.Folders {
				fmt.Fprintf(&b, " folder id %s;", fo.ID)
			}
			b.WriteString(" ask the user which one is meant, or give the folder's path.")
		default:
			kind := "file or folder"
			if m.Folder {
				kind = "folder"
			}
			fmt.Fprintf(&b, "\n- @%s: no %s of this workspace that the user can read has this name; say so rather than guess (listFiles shows the names).", m.Text, kind)
		}
	}
	return b.String()
}
