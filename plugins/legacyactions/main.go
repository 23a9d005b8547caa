// Command legacyactions is the built-in plugin of kind "actions" with the
// legacy domain actions that are not AI actions (the AI actions are the
// agent's own work now, docs/plugins.md). context.neutralizeData is the legacy action
// of that name: personal data replaced by placeholders, in a text or in
// documents of the workflow, with the mapping back on request.
// trustee.extractFromFiles reads the payment data of invoices into a CSV.
package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/agenthost/agenthost/pdk/actions"
	"github.com/agenthost/agenthost/pdk/files"
	"github.com/agenthost/agenthost/plugins/legacyactions/extract"
	"github.com/agenthost/agenthost/plugins/legacyactions/neutralize"
)

type neutralizeParams struct {
	Text         string   `json:"text,omitempty" maxLength:"1000000" description:"text to neutralize; the neutralized text is the result"`
	DocumentList []string `json:"documentList,omitempty" maxItems:"20" description:"docItem:<id> or docList:<label> references (or file ids) of text documents; each comes back neutralized as a new document"`
	Kinds        []string `json:"kinds,omitempty" description:"what to replace: NAME, EMAIL, IBAN, AHV, PHONE (default: all)"`
	// The mapping undoes the neutralization, so it is only made on request.
	ReturnMapping bool `json:"returnMapping,omitempty" description:"also return the placeholder→original mapping as a JSON document (it contains the personal data)"`
}

// maxDocument bounds one document read for neutralization.
const maxDocument = 8 << 20

func init() {
	actions.Register(actions.Descriptor{Method: "context", Action: "neutralizeData", DynamicMode: true,
		Description: "Replaces personal data (person names, e-mail addresses, IBANs, Swiss AHV numbers, phone numbers) by placeholders " +
			"such as [NAME_1] and [EMAIL_2], the same placeholder for the same person or value throughout, before text is shared. " +
			"Give text, or documentList with docItem: references of text documents (each comes back as a neutralized document). " +
			"Names are found by cues (titles, salutations, signatures, field labels, known given names), so check the result."},
		neutralizeData)
	actions.Register(actions.Descriptor{Method: "trustee", Action: "extractFromFiles", DynamicMode: true,
		Description: "Reads the payment data of invoices (text documents): invoice number, date, total and currency, the IBAN to pay to " +
			"(checked) and the Swiss company number (UID, checked). Give documentList with docItem: references; the result is a CSV " +
			"document with one row per invoice, and the same rows as data."},
		extractFromFiles)
}

type extractParams struct {
	DocumentList []string `json:"documentList" minItems:"1" maxItems:"50" description:"docItem:<id> or docList:<label> references (or file ids) of invoices as text documents"`
}

type invoiceRow struct {
	File string `json:"file"`
	extract.Invoice
	Note string `json:"note,omitempty"`
}

func extractFromFiles(p extractParams) (actions.Result, error) {
	var rows []invoiceRow
	found := 0
	for _, ref := range p.DocumentList {
		f, err := files.Read(ref, maxDocument)
		if err != nil {
			return actions.Failure(fmt.Sprintf("reading %s: %v", ref, err)), nil
		}
		row := invoiceRow{File: f.Name}
		switch {
		case f.Truncated:
			row.Note = fmt.Sprintf("larger than %d bytes; not read", maxDocument)
		case !utf8.Valid(f.Data) || !textual(f.MIMEType):
			row.Note = "not a text document; extract its text first"
		default:
			row.Invoice = extract.Read(string(f.Data))
			if row.Invoice == (extract.Invoice{}) {
				row.Note = "no invoice data found"
			} else {
				found++
			}
		}
		rows = append(rows, row)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = ';'
	_ = w.Write([]string{"file", "invoiceNumber", "date", "total", "currency", "iban", "uid", "note"})
	for _, r := range rows {
		_ = w.Write([]string{r.File, r.InvoiceNumber, r.Date, r.Total, r.Currency, r.IBAN, r.UID, r.Note})
	}
	w.Flush()
	res := actions.Success(fmt.Sprintf("read %d of %d document(s) as invoices", found, len(rows)),
		actions.Document{Name: "extracted-invoices.csv", MIMEType: "text/csv", Data: buf.Bytes()})
	res.Data = rows
	return res, nil
}

func neutralizeData(p neutralizeParams) (actions.Result, error) {
	if p.Text == "" && len(p.DocumentList) == 0 {
		return actions.Failure("give text or documentList"), nil
	}
	var kinds []neutralize.Kind
	for _, k := range p.Kinds {
		kind := neutralize.Kind(strings.ToUpper(strings.TrimSpace(k)))
		known := false
		for _, x := range neutralize.Kinds {
			known = known || x == kind
		}
		if !known {
			return actions.Failure(fmt.Sprintf("unknown kind %q (known: NAME, EMAIL, IBAN, AHV, PHONE)", k)), nil
		}
		kinds = append(kinds, kind)
	}
	n := neutralize.New(kinds...)
	counts := map[neutralize.Kind]int{}
	var res actions.Result
	var report []string
	if p.Text != "" {
		out, spans := n.Neutralize(p.Text)
		for _, s := range spans {
			counts[s.Kind]++
		}
		res.Text = out
	}
	for _, ref := range p.DocumentList {
		f, err := files.Read(ref, maxDocument)
		if err != nil {
			return actions.Failure(fmt.Sprintf("reading %s: %v", ref, err)), nil
		}
		if f.Truncated {
			return actions.Failure(fmt.Sprintf("%s (%s) is larger than %d bytes", ref, f.Name, maxDocument)), nil
		}
		if !utf8.Valid(f.Data) || !textual(f.MIMEType) {
			return actions.Failure(fmt.Sprintf("%s (%s, %s) is not a text document; extract its text first", ref, f.Name, f.MIMEType)), nil
		}
		out, spans := n.Neutralize(string(f.Data))
		for _, s := range spans {
			counts[s.Kind]++
		}
		name := neutralizedName(f.Name)
		res.Documents = append(res.Documents, actions.Document{Name: name, MIMEType: "text/plain; charset=utf-8", Data: []byte(out)})
		report = append(report, fmt.Sprintf("%s → %s: %d replacement(s)", f.Name, name, len(spans)))
	}
	if p.ReturnMapping {
		b, err := json.MarshalIndent(n.Mapping(), "", "  ")
		if err != nil {
			return actions.Result{}, err
		}
		res.Documents = append(res.Documents, actions.Document{Name: "neutralization-mapping.json", MIMEType: "application/json", Data: b})
	}
	res.Success = true
	summary := fmt.Sprintf("replaced %d name(s), %d e-mail address(es), %d IBAN(s), %d AHV number(s), %d phone number(s)",
		counts[neutralize.Name], counts[neutralize.Email], counts[neutralize.IBAN], counts[neutralize.AHV], counts[neutralize.Phone])
	res.Data = map[string]any{"replacements": counts, "placeholders": len(n.Mapping())}
	if len(report) > 0 {
		summary += "\n" + strings.Join(report, "\n")
	}
	if res.Text == "" {
		res.Text = summary
	} else {
		res.Text = summary + "\n\n" + res.Text
	}
	return res, nil
}

// neutralizedName: "brief.txt" → "brief.neutralized.txt".
func neutralizedName(name string) string {
	ext := path.Ext(name)
	base := strings.TrimSuffix(name, ext)
	if ext == "" || !textual("text/"+strings.TrimPrefix(ext, ".")) {
		ext = ".txt"
	}
	return base + ".neutralized" + ext
}

func textual(mime string) bool {
	mime, _, _ = strings.Cut(mime, ";")
	switch {
	case strings.HasPrefix(mime, "text/"):
		return true
	case mime == "application/json", mime == "application/xml", mime == "application/x-yaml", mime == "application/csv", mime == "":
		return true
	}
	return false
}

func main() {}
