package analysis

import (
	"slices"
	"strings"
	"testing"
)

// field reports which field of doc a query's single term is found in
// ("exact", "stems", "parts" or ""), as the store's index looks it up.
func field(a *Analyzer, doc, docLang, query string, langs []string) string {
	f := a.Document(doc, docLang)
	has := func(list string, forms []string) bool {
		words := strings.Fields(list)
		for _, w := range forms {
			if slices.Contains(words, w) {
				return true
			}
		}
		return false
	}
	terms := a.Query(query, langs)
	found := ""
	rank := map[string]int{"": 0, "parts": 1, "stems": 2, "exact": 3}
	for _, t := range terms {
		forms := t.Forms()
		switch {
		case has(f.Exact, forms):
			if found == "" {
				found = "exact"
			}
		case has(f.Stems, forms):
			if rank[found] < 2 || found == "exact" {
				found = "stems"
			}
		case has(f.Parts, forms):
			if found == "" {
				found = "parts"
			}
		default:
			return ""
		}
	}
	return found
}

func TestDocumentAndQuery(t *testing.T) {
	a := New()
	cases := []struct {
		name, doc, lang, query string
		langs                  []string
		want                   string
	}{
		{"de plural finds singular", "Alle Pflichtfelder müssen ausgefüllt sein.", "de", "Pflichtfeld", []string{"de"}, "stems"},
		// The plural's stem is the singular's exact form.
		{"de singular finds plural", "Das Pflichtfeld ist markiert.", "de", "Pflichtfelder", []string{"de"}, "exact"},
		{"de Abbildung", "Die Abbildungen zeigen den Ablauf.", "de", "Abbildung", []string{"de"}, "stems"},
		{"de Sortierungen", "Die Sortierung der Liste.", "de", "Sortierungen", []string{"de"}, "stems"},
		{"de Klausuren", "Die Klausuren finden im Juli statt.", "de", "Klausur", []string{"de"}, "stems"},
		{"de exact form", "Das Pflichtfeld ist markiert.", "de", "Pflichtfeld", []string{"de"}, "exact"},
		{"de compound part", "Die Rechnungsprüfung dauert zwei Wochen.", "de", "Prüfung", []string{"de"}, "parts"},
		{"de compound tail in plural", "Alle Pflichtfelder müssen ausgefüllt sein.", "de", "Feld", []string{"de"}, "parts"},
		{"de no accidental part", "Die Verwaltung prüft alles.", "de", "Walt", []string{"de"}, ""},
		{"de Strasse finds Straße", "Die Straße ist gesperrt.", "de", "Strasse", []string{"de"}, "exact"},
		{"de Straße finds Strasse", "Die Strasse ist gesperrt.", "de", "STRASSE", []string{"de"}, "exact"},
		{"de ue for ü", "Die Prüfung beginnt.", "de", "Pruefung", []string{"de"}, "exact"},
		{"fr accents", "Le résumé des données.", "fr", "resume", []string{"fr"}, "exact"},
		{"fr plural", "Les fichiers de configuration", "fr", "fichier", []string{"fr"}, "stems"},
		{"it plural", "Le impostazioni del sistema", "it", "impostazione", []string{"it"}, "stems"},
		{"en verb forms", "The server was running.", "en", "runs", []string{"en"}, "stems"},
		{"sv keeps å", "Jag har en får.", "sv", "far", []string{"sv"}, ""},
		{"ko particle", "타이포그래피에서 글꼴을 고릅니다.", "ko", "타이포그래피", nil, "stems"},
		{"ko particle in query", "타이포그래피는 중요합니다.", "ko", "타이포그래피에서", nil, "stems"},
		{"ja bigrams", "東京都に住んでいます。", "ja", "東京", nil, "exact"},
		{"ja single char", "東京都に住んでいます。", "ja", "都", nil, "parts"},
		{"ja not found", "東京都に住んでいます。", "ja", "京阪", nil, ""},
		{"zh bigrams", "数据库的配置文件", "zh", "配置", nil, "exact"},
		{"th bigrams", "ภาษาไทยเขียนติดกัน", "th", "ภาษา", nil, "exact"},
		{"fullwidth NFKC", "ＡＢＣ Firma", "de", "abc", []string{"de"}, "exact"},
		{"ligature", "the ﬁle system", "en", "file", []string{"en"}, "exact"},
		{"query in all languages", "Alle Pflichtfelder müssen ausgefüllt sein.", "de", "Pflichtfeld", nil, "stems"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := field(a, c.doc, c.lang, c.query, c.langs); got != c.want {
				f := a.Document(c.doc, c.lang)
				t.Errorf("%q in %q: found in %q, want %q (doc %+v, query %+v)", c.query, c.doc, got, c.want, f, a.Query(c.query, c.langs))
			}
		})
	}
}

func TestCompoundParts(t *testing.T) {
	a := New()
	cases := []struct {
		word string
		want []string
	}{
		{"rechnungsprüfung", []string{"rechnung", "prüfung"}},
		{"pflichtfelder", []string{"pflicht", "felder"}},
		{"verwaltung", nil},
		{"haus", nil},
	}
	for _, c := range cases {
		if got := a.compoundParts(c.word); !slices.Equal(got, c.want) {
			t.Errorf("compoundParts(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

func TestDetect(t *testing.T) {
	a := New()
	cases := map[string]string{
		"Die Konfiguration des Servers wird in der Datei gespeichert, die beim Start gelesen wird.": "de",
		"La configuration du serveur est enregistrée dans le fichier lu au démarrage.":              "fr",
		"La configurazione del server è salvata nel file che viene letto all'avvio.":                "it",
		"The server's configuration is stored in the file that is read at start-up.":                "en",
		"서버 설정은 시작할 때 읽는 파일에 저장됩니다.":                                                                "ko",
		"サーバーの設定は起動時に読み込まれるファイルに保存されます。":                                                            "ja",
	}
	for text, want := range cases {
		if got := a.Detect(text); got != want {
			t.Errorf("Detect(%q) = %q, want %q", text, got, want)
		}
	}
}
