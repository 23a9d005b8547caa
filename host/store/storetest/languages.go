package storetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agenthost/agenthost/host/files"
	"github.com/agenthost/agenthost/host/knowledge/chunk"
	"github.com/agenthost/agenthost/host/knowledge/kindex"
	"github.com/agenthost/agenthost/host/store"
	"github.com/agenthost/agenthost/host/tenancy"
	"github.com/agenthost/agenthost/pdk/content"
)

// EvalLanguages are the languages of the search evaluation
// (testdata/search), in the order figures are reported.
var EvalLanguages = []string{"de", "fr", "it", "en", "ko", "ja"}

// EvalQuestion is a question of the search evaluation and the page of its
// language's document that answers it.
type EvalQuestion struct {
	Lang string
	Page int
	Text string
}

// evalDocs names the evaluation's document of each language.
var evalDocs = map[string]string{
	"de": "debian-reference-ch01.de.txt", "fr": "debian-reference-ch01.fr.txt", "it": "debian-reference-ch01.it.txt",
	"en": "debian-reference-ch01.en.txt", "ja": "debian-reference-ch01.ja.txt", "ko": "gimp-help.ko.txt",
}

// evalDir is testdata/search of the repository.
func evalDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", "search")
}

var pageHeader = regexp.MustCompile(`(?m)^## page (\d+): .*$`)

// evalPages reads a document of the evaluation: its pages by number.
func evalPages(name string) (map[int]string, error) {
	b, err := os.ReadFile(filepath.Join(evalDir(), name))
	if err != nil {
		return nil, err
	}
	s := string(b)
	pages := map[int]string{}
	locs := pageHeader.FindAllStringSubmatchIndex(s, -1)
	for i, loc := range locs {
		n, _ := strconv.Atoi(s[loc[2]:loc[3]])
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		pages[n] = strings.TrimSpace(s[loc[0]:end])
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("%s: no pages", name)
	}
	return pages, nil
}

// EvalQuestions reads testdata/search/questions.tsv.
func EvalQuestions(tb testing.TB) []EvalQuestion {
	tb.Helper()
	f, err := os.Open(filepath.Join(evalDir(), "questions.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var qs []EvalQuestion
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) != 3 {
			tb.Fatalf("questions.tsv: %q", line)
		}
		page, err := strconv.Atoi(parts[1])
		if err != nil {
			tb.Fatalf("questions.tsv: %q: %v", line, err)
		}
		qs = append(qs, EvalQuestion{Lang: parts[0], Page: page, Text: parts[2]})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return qs
}

// EvalIndex uploads the evaluation's documents into the workspace and
// indexes them as ingestion does (a text object a page, chunks of about 512
// tokens); it returns the file of each language.
func EvalIndex(tb testing.TB, db *store.DB, svc *files.Service, p tenancy.Principal, ws string) map[string]string {
	tb.Helper()
	ctx := context.Background()
	ids := map[string]string{}
	for _, lang := range EvalLanguages {
		name := evalDocs[lang]
		pages, err := evalPages(name)
		if err != nil {
			tb.Fatal(err)
		}
		var objects []content.Object
		for n := 1; n <= len(pages); n++ {
			objects = append(objects, content.Object{ID: fmt.Sprint("p", n), ContentType: content.Text, Data: pages[n], Ref: content.Ref{PageIndex: n}})
		}
		f, _, err := svc.Upload(ctx, p, files.Upload{WorkspaceID: ws, Name: name, Content: strings.NewReader(strings.Join(slicesOf(pages), "\n"))})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := db.ClaimContent(ctx, p.TenantID, f.SHA256, false); err != nil {
			tb.Fatal(err)
		}
		if err := db.SaveContent(ctx, p.TenantID, f.SHA256, content.Index{FileName: name, MIMEType: "text/plain"}, chunk.Split(objects, 0), kindex.StatusIndexed); err != nil {
			tb.Fatal(err)
		}
		ids[lang] = f.ID
	}
	return ids
}

func slicesOf(pages map[int]string) []string {
	out := make([]string, 0, len(pages))
	for n := 1; n <= len(pages); n++ {
		out = append(out, pages[n])
	}
	return out
}

// EvalRank is the rank (from 1) of the first of the question's five best
// hits that is on its page of its language's document; 0 when none is.
func EvalRank(tb testing.TB, db *store.DB, p tenancy.Principal, ws string, ids map[string]string, q EvalQuestion, langs []string) int {
	tb.Helper()
	hits, err := db.SearchLexical(context.Background(), p, kindex.Query{Text: q.Text, WorkspaceID: ws, Limit: 5, Languages: langs})
	if err != nil {
		tb.Fatalf("%s %q: %v", q.Lang, q.Text, err)
	}
	for i, h := range hits {
		if h.FileID == ids[q.Lang] && h.Ref.PageIndex == q.Page {
			return i + 1
		}
	}
	return 0
}

// testLanguages: on real documents in six languages, questions typed as
// people type them (other inflections, compounds, particles, no spaces) find
// the page that answers them among the five best hits, for at least 80% of
// each language's questions; and the German and Korean cases.
func testLanguages(t *testing.T, open Opener) {
	ctx := context.Background()
	w := newWorld(t, open)
	db := w.env.DB
	ids := EvalIndex(t, db, w.svc, w.alice, w.wsA.ID)
	hit, total := map[string]int{}, map[string]int{}
	for _, q := range EvalQuestions(t) {
		total[q.Lang]++
		if EvalRank(t, db, w.alice, w.wsA.ID, ids, q, nil) > 0 {
			hit[q.Lang]++
		} else {
			t.Logf("%s: %q not answered by page %d in the five best hits", q.Lang, q.Text, q.Page)
		}
	}
	for _, lang := range EvalLanguages {
		if total[lang] < 20 {
			t.Errorf("%s: %d questions, want 20 at least", lang, total[lang])
		}
		if r := float64(hit[lang]) / float64(max(1, total[lang])); r < 0.8 {
			t.Errorf("%s: hit@5 %.2f (%d of %d), want at least 0.8", lang, r, hit[lang], total[lang])
		}
	}

	// A word in a form its language's document never uses finds the pages
	// with its other forms (among the first three: other words of its stem
	// may rank first).
	for _, c := range []struct{ lang, query, form string }{
		{"en", "timestamp", "timestamps"}, {"en", "shutdowns", "shutdown"},
		{"de", "Zeitstempels", "zeitstempel"},
		{"fr", "horodatages", "horodatage"}, {"fr", "personnalisations", "personnalisation"},
		{"it", "personalizzazioni", "personalizzazione"}, {"it", "configurazioni", "configurazione"},
	} {
		pages, err := evalPages(evalDocs[c.lang])
		if err != nil {
			t.Fatal(err)
		}
		hits, err := db.SearchLexical(ctx, w.alice, kindex.Query{Text: c.query, FileIDs: []string{ids[c.lang]}, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, h := range hits {
			found = found || strings.Contains(strings.ToLower(pages[h.Ref.PageIndex]), c.form)
		}
		if !found {
			t.Errorf("%s: %q finds %d chunks; want one of a page with %q among the first three", c.lang, c.query, len(hits), c.form)
		}
	}

	// The words of issue 33, in a document of their own.
	doc := upload(t, w, w.alice, w.wsA.ID, "formular.txt", "formular")
	objects := []content.Object{
		{ID: "a", ContentType: content.Text, Data: "Alle Pflichtfelder des Formulars müssen ausgefüllt werden, bevor Sie es absenden.", Ref: content.Ref{PageIndex: 1}},
		{ID: "b", ContentType: content.Text, Data: "Ein Feld ohne Stern darf leer bleiben; das Feld wird dann ignoriert.", Ref: content.Ref{PageIndex: 2}},
		{ID: "c", ContentType: content.Text, Data: "Die Rechnungsprüfung erfolgt jährlich durch die Revisionsstelle.", Ref: content.Ref{PageIndex: 3}},
		{ID: "d", ContentType: content.Text, Data: "Die Abbildungen zeigen die Sortierung der Klausuren nach Datum.", Ref: content.Ref{PageIndex: 4}},
		{ID: "e", ContentType: content.Text, Data: "Die Lieferadresse: Bahnhofstraße 12, 8001 Zürich.", Ref: content.Ref{PageIndex: 5}},
		{ID: "f", ContentType: content.Text, Data: "글꼴과 타이포그래피에서 가장 중요한 것은 가독성입니다.", Ref: content.Ref{PageIndex: 6}},
		{ID: "g", ContentType: content.Text, Data: "The Verwaltung building has a new roof.", Ref: content.Ref{PageIndex: 7}},
	}
	if _, err := db.ClaimContent(ctx, w.t1.ID, doc.SHA256, false); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveContent(ctx, w.t1.ID, doc.SHA256, content.Index{}, chunk.Split(objects, 0), kindex.StatusIndexed); err != nil {
		t.Fatal(err)
	}
	pages := func(query string, langs []string) []int {
		hits, err := db.SearchLexical(ctx, w.alice, kindex.Query{Text: query, FileIDs: []string{doc.ID}, Languages: langs})
		if err != nil {
			t.Fatalf("%q: %v", query, err)
		}
		var out []int
		for _, h := range hits {
			out = append(out, h.Ref.PageIndex)
		}
		return out
	}
	for _, c := range []struct {
		query string
		langs []string
		want  []int // pages, best first
	}{
		{"Pflichtfeld", nil, []int{1}},
		{"Pflichtfelder", []string{"de"}, []int{1}},
		{"Feld", nil, []int{2, 1}}, // the word itself above the compound
		{"Prüfung", nil, []int{3}},
		{"Pruefung", []string{"de"}, []int{3}},
		{"Abbildung", nil, []int{4}},
		{"Sortierungen", nil, []int{4}},
		{"Klausur", nil, []int{4}},
		{"Bahnhofstrasse", nil, []int{5}},
		{"BAHNHOFSTRASSE zurich", []string{"de"}, []int{5}},
		{"타이포그래피", nil, []int{6}},
		{"타이포그래피는", nil, []int{6}},
		{"walt", nil, nil}, // no accidental substring of Verwaltung
	} {
		if got := pages(c.query, c.langs); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q (languages %v): pages %v, want %v", c.query, c.langs, got, c.want)
		}
	}

	// A workspace's languages: German only, and a language nobody analyses
	// is refused.
	if err := db.SetWorkspaceLanguages(ctx, w.carol, w.wsB.ID, []string{"de-CH", "fr"}); err != nil {
		t.Fatal(err)
	}
	if langs, err := db.WorkspaceLanguages(ctx, w.carol, w.wsB.ID); err != nil || fmt.Sprint(langs) != "[de fr]" {
		t.Errorf("workspace languages: %v %v", langs, err)
	}
	if err := db.SetWorkspaceLanguages(ctx, w.carol, w.wsB.ID, []string{"xx"}); err == nil {
		t.Error("an unknown language was accepted")
	}
	if err := db.SetWorkspaceLanguages(ctx, w.alice, w.wsA.ID, []string{"de"}); err == nil {
		t.Error("a member who is no manager set the workspace's languages")
	}
}

// testReanalysis: chunks indexed before the analysis (schema version 37)
// are searchable by their words after the upgrade and analysed again by it:
// found by another inflection, with their language stored, nothing lost.
func testReanalysis(t *testing.T, open Opener) {
	ctx := context.Background()
	env := open(t)
	db := env.DB
	if _, err := db.MigrateTo(ctx, 37); err != nil {
		t.Fatal(err)
	}
	tn := must(db.CreateTenant(ctx, "old"))
	ws := must(db.CreateWorkspace(ctx, tenancy.Workspace{TenantID: tn.ID, Name: "ws"}))
	u := must(db.CreateUser(ctx, tenancy.User{TenantID: tn.ID, Email: "u@old", Name: "u"}))
	if err := db.SetMembership(ctx, tenancy.Membership{WorkspaceID: ws.ID, UserID: u.ID, Role: tenancy.RoleMember}); err != nil {
		t.Fatal(err)
	}
	p := tenancy.Principal{TenantID: tn.ID, UserID: u.ID}
	svc := files.NewService(db, env.Blobs, 1<<20)
	f, _, err := svc.Upload(ctx, p, files.Upload{WorkspaceID: ws.ID, Name: "alt.txt", Content: strings.NewReader("alt")})
	if err != nil {
		t.Fatal(err)
	}
	// As the store of version 37 wrote them (its SaveContent).
	texts := []string{
		"Alle Pflichtfelder des Formulars müssen ausgefüllt werden, bevor Sie es absenden.",
		"Les fichiers de configuration sont lus au démarrage du serveur.",
	}
	if _, err := db.SQL().ExecContext(ctx, rebind(db, `INSERT INTO content_indexes (tenant_id, sha256, status, updated_at) VALUES (?, ?, 'indexed', 1)`), tn.ID, f.SHA256); err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if _, err := db.SQL().ExecContext(ctx, rebind(db, `INSERT INTO chunks (id, tenant_id, sha256, seq, object_id, content_type, text, ref, page, section, tokens, hidden)
			VALUES (?, ?, ?, ?, ?, 'text', ?, '{}', ?, '', 20, ?)`), fmt.Sprintf("%s:%s:c%d", tn.ID, f.SHA256, i), tn.ID, f.SHA256, i, fmt.Sprint("o", i), text, i+1, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		page  int
	}{{"Pflichtfeld", 1}, {"Feld", 1}, {"fichier", 2}, {"demarrage", 2}} {
		hits, err := db.SearchLexical(ctx, p, kindex.Query{Text: c.query, WorkspaceID: ws.ID})
		if err != nil || len(hits) != 1 || hits[0].Text != texts[c.page-1] {
			t.Errorf("%q after the upgrade: %+v %v, want chunk %d", c.query, hits, err, c.page)
		}
	}
	var langs []string
	rows, err := db.SQL().QueryContext(ctx, `SELECT lang FROM chunks ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		langs = append(langs, l)
	}
	if fmt.Sprint(langs) != "[de fr]" {
		t.Errorf("languages after the upgrade: %v, want [de fr]", langs)
	}
}

// rebind writes '?' placeholders as $1, $2, … on PostgreSQL.
func rebind(db *store.DB, q string) string {
	if db.Dialect() != store.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
