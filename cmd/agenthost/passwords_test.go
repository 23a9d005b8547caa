package main

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/agenthost/agenthost/host/builtin"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/knowledge/unlock"
	"github.com/agenthost/agenthost/internal/testcorpus"
	"github.com/agenthost/agenthost/internal/testpdf"
)

// TestServeFilePassword (issue 26 items 4 and 5) runs serve with the
// built-in extractors: an AES-256 PDF (encrypted by pdfcpu) and an
// encrypted 7z (libarchive's test archive, password "12345678") end as
// "encrypted", not failed nor indexed; a wrong password given on the file
// leaves them encrypted with "wrong password" and nothing lost; the right
// one indexes them (the PDF's words are found); passwords tried are bounded
// per file; the password is in no log line.
func TestServeFilePassword(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server with the built-in plugins")
	}
	if srcs, err := builtin.Sources(); err != nil || len(srcs) == 0 {
		t.Fatalf("this test binary carries no built-in plugins (%v): run `make plugins` first", err)
	}
	t.Setenv(extractorsEnv, "")
	data := t.TempDir()
	out, stderr, err := run0(t, "admin", "bootstrap", "-data", data, "-database=", "-tenant", "Acme", "-email", "ada@acme.example")
	if err != nil {
		t.Fatalf("bootstrap: %v\n%s", err, stderr)
	}
	ws := regexp.MustCompile(`workspace (\S+)`).FindStringSubmatch(out)
	tok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(out)
	if ws == nil || tok == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	// Bob, a member of two other workspaces, uploads the same bytes as
	// Ada's encrypted files there.
	tenant := regexp.MustCompile(`(?m)^tenant (\S+)$`).FindStringSubmatch(out)
	if tenant == nil {
		t.Fatalf("bootstrap printed %s", out)
	}
	admin := func(args ...string) string {
		t.Helper()
		out, stderr, err := run0(t, append([]string{"admin"}, append(args, "-data", data, "-database=")...)...)
		if err != nil {
			t.Fatalf("admin %v: %v\n%s", args, err, stderr)
		}
		return out
	}
	bob := strings.TrimPrefix(strings.TrimSpace(admin("user", "-tenant", tenant[1], "-email", "bob@acme.example", "-name", "Bob")), "user ")
	bobWS := map[string]string{}
	for _, name := range []string{"other", "third"} {
		bobWS[name] = strings.TrimPrefix(strings.TrimSpace(admin("workspace", "-tenant", tenant[1], "-name", name)), "workspace ")
		admin("member", "-workspace", bobWS[name], "-user", bob, "-role", "member")
	}
	bobTok := regexp.MustCompile(`\(shown once, keep it\): (\S+)`).FindStringSubmatch(admin("token", "-user", bob, "-name", "bob"))
	if bobTok == nil {
		t.Fatal("no token for bob")
	}
	base, logs := startServe(t, []string{"-data", data, "-database="})
	token := tok[1]
	call := func(method, path string, body io.Reader, ctype string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+"/api/v1"+path, body)
		req.Header.Set("Authorization", "Bearer "+token)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	var uploadTo func(wsID, name string, b []byte) string
	var hitsIn func(wsID, q string) int
	upload := func(name string, b []byte) string { return uploadTo(ws[1], name, b) }
	uploadTo = func(wsID, name string, b []byte) string {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		part, _ := mw.CreateFormFile("file", name)
		part.Write(b)
		mw.Close()
		var f struct{ ID string }
		if status, raw := call("POST", "/workspaces/"+wsID+"/files", &body, mw.FormDataContentType()); status != 201 || json.Unmarshal(raw, &f) != nil {
			t.Fatalf("upload %s: %d %s", name, status, raw)
		}
		return f.ID
	}
	type state struct {
		Status kindex.Status
		Error  string
	}
	settled := func(id string) state {
		t.Helper()
		// No deadline of its own: the test binary's -timeout bounds it.
		for ; ; time.Sleep(100 * time.Millisecond) {
			var st state
			if status, raw := call("GET", "/files/"+id+"/index", nil, ""); status == 200 {
				if err := json.Unmarshal(raw, &st); err != nil {
					t.Fatal(err)
				}
			}
			switch st.Status {
			case kindex.StatusIndexed, kindex.StatusFailed, unlock.StatusEncrypted:
				return st
			}
		}
	}
	give := func(id, pw string) (int, state) {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"password": pw})
		status, raw := call("POST", "/files/"+id+"/password", bytes.NewReader(b), "application/json")
		var st state
		_ = json.Unmarshal(raw, &st)
		if status != 200 {
			st.Error = string(raw)
		}
		return status, st
	}
	hits := func(q string) int { return hitsIn(ws[1], q) }
	hitsIn = func(wsID, q string) int {
		_, raw := call("GET", "/workspaces/"+wsID+"/search?q="+url.QueryEscape(q), nil, "")
		var hs []kindex.Hit
		if err := json.Unmarshal(raw, &hs); err != nil {
			t.Fatalf("search %q: %s", q, raw)
		}
		return len(hs)
	}

	const pdfPassword, zPassword = "Corr3ct-Horse", "12345678"
	api.DisableConfigDir()
	var enc bytes.Buffer
	if err := api.Encrypt(bytes.NewReader(testpdf.OnePage("Zanzibar vaccination ledger")), &enc, model.NewAESConfiguration(pdfPassword, "owner-"+pdfPassword, 256)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		content    []byte
		password   string
		words      string
	}{
		{"AES-256 PDF", "ledger.pdf", enc.Bytes(), pdfPassword, "Zanzibar"},
		{"7z AES-256", "secret.7z", testcorpus.Read(t, "archives", "formats", "libarchive-7zip-encrypted.7z"), zPassword, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := upload(c.file, c.content)
			if st := settled(id); st.Status != unlock.StatusEncrypted || !strings.Contains(st.Error, "needs its password") {
				t.Fatalf("without a password: %+v, want encrypted and why", st)
			}
			if c.words != "" && hits(c.words) != 0 {
				t.Fatal("an encrypted file's words are found")
			}
			if status, st := give(id, "not-it"); status != 200 || st.Status != unlock.StatusEncrypted || !strings.HasPrefix(st.Error, kindex.ReasonWrongPassword) {
				t.Fatalf("a wrong password: %d %+v, want encrypted with %q", status, st, kindex.ReasonWrongPassword)
			}
			if status, st := give(id, c.password); status != 200 || st.Status != kindex.StatusIndexed {
				t.Fatalf("the right password: %d %+v, want indexed", status, st)
			}
			if c.words != "" && hits(c.words) != 1 {
				t.Errorf("after the password: %q not found", c.words)
			}
			if status, st := give(id, c.password); status != 409 {
				t.Errorf("a password for an indexed file: %d %+v, want 409", status, st)
			}
		})
	}

	// Ada's ledger.pdf and secret.7z were read with their passwords above:
	// the same bytes uploaded by Bob in other workspaces stay locked for
	// him until he gives the password for his file, which is checked.
	sevenZ := testcorpus.Read(t, "archives", "formats", "libarchive-7zip-encrypted.7z")
	for _, c := range []struct {
		name, file string
		content    []byte
		password   string
		words      string
	}{
		{"same bytes, another uploader: PDF", "copy.pdf", enc.Bytes(), pdfPassword, "Zanzibar"},
		{"same bytes, another uploader: 7z", "copy.7z", sevenZ, zPassword, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			token = bobTok[1]
			defer func() { token = tok[1] }()
			// What Bob reads of a file: its objects (a document) or
			// entries (an archive).
			reads := func(id string) bool {
				t.Helper()
				if c.words != "" {
					status, raw := call("GET", "/files/"+id+"/objects", nil, "")
					return status == 200 && strings.Contains(string(raw), c.words)
				}
				status, raw := call("GET", "/files/"+id+"/entries", nil, "")
				var entries []kindex.ContainerEntry
				_ = json.Unmarshal(raw, &entries)
				return status == 200 && len(entries) > 0
			}
			found := func(wsID string) bool { return c.words != "" && hitsIn(wsID, c.words) > 0 }
			id := uploadTo(bobWS["other"], c.file, c.content)
			if st := settled(id); st.Status != unlock.StatusEncrypted || !strings.Contains(st.Error, "needs its password") {
				t.Fatalf("bob's copy: %+v, want encrypted and why", st)
			}
			if found(bobWS["other"]) || reads(id) {
				t.Fatal("bob reads a file he gave no password for")
			}
			if status, st := give(id, "not-it"); status != 200 || st.Status != unlock.StatusEncrypted || !strings.HasPrefix(st.Error, kindex.ReasonWrongPassword) {
				t.Fatalf("a wrong password: %d %+v, want encrypted with %q", status, st, kindex.ReasonWrongPassword)
			}
			if found(bobWS["other"]) || reads(id) {
				t.Fatal("a wrong password unlocked the copy")
			}
			// Another copy of his, in the third workspace.
			third := uploadTo(bobWS["third"], c.file, c.content)
			if status, st := give(id, c.password); status != 200 || st.Status != kindex.StatusIndexed {
				t.Fatalf("the right password: %d %+v, want indexed", status, st)
			}
			if !reads(id) || (c.words != "" && !found(bobWS["other"])) {
				t.Error("bob does not read his copy after its password")
			}
			if st := settled(third); st.Status != unlock.StatusEncrypted {
				t.Errorf("the copy in the third workspace: %+v, want encrypted", st)
			}
			if found(bobWS["third"]) || reads(third) {
				t.Error("the copy in the third workspace is read")
			}
			// Ada, who unlocked first, keeps hers.
			token = tok[1]
			if c.words != "" && hits(c.words) != 1 {
				t.Errorf("ada does not find %q after bob's copies", c.words)
			}
		})
	}

	t.Run("password given with the upload", func(t *testing.T) {
		var enc3 bytes.Buffer
		if err := api.Encrypt(bytes.NewReader(testpdf.OnePage("Quokka inventory sheet")), &enc3, model.NewAESConfiguration("up-"+pdfPassword, "upo-"+pdfPassword, 128)); err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("password", "up-"+pdfPassword)
		part, _ := mw.CreateFormFile("file", "quokka.pdf")
		part.Write(enc3.Bytes())
		mw.Close()
		var res struct {
			ID    string
			Index *state
		}
		if status, raw := call("POST", "/workspaces/"+ws[1]+"/files", &body, mw.FormDataContentType()); status != 201 || json.Unmarshal(raw, &res) != nil || res.Index == nil || res.Index.Status != kindex.StatusIndexed {
			t.Fatalf("upload with its password: %d %s, want indexed", status, raw)
		}
		if hits("Quokka") != 1 {
			t.Error("the PDF uploaded with its password is not found")
		}
	})

	t.Run("attempts are bounded", func(t *testing.T) {
		var enc2 bytes.Buffer
		if err := api.Encrypt(bytes.NewReader(testpdf.OnePage("Guessing stops here")), &enc2, model.NewRC4Configuration("x-"+pdfPassword, "y-"+pdfPassword, 128)); err != nil {
			t.Fatal(err)
		}
		id := upload("guess.pdf", enc2.Bytes())
		settled(id)
		for i := range unlock.PasswordAttempts {
			if status, st := give(id, "guess"+string(rune('a'+i))); status != 200 || st.Status != unlock.StatusEncrypted {
				t.Fatalf("attempt %d: %d %+v", i+1, status, st)
			}
		}
		if status, st := give(id, "x-"+pdfPassword); status != 429 {
			t.Fatalf("attempt past the bound (with the right password): %d %+v, want 429", status, st)
		}
	})

	for _, pw := range []string{pdfPassword, "owner-" + pdfPassword, "x-" + pdfPassword, "up-" + pdfPassword} {
		if strings.Contains(logs.String(), pw) {
			t.Errorf("the log holds the password %q", pw)
		}
	}
}
