// Package extract reads the payment data of an invoice from its text: the
// legacy action trustee.extractFromFiles without a model.
// It finds the IBAN or QR-IBAN to pay to (mod-97 checked), the Swiss
// company number (UID, CHE-123.456.789, check digit verified), the invoice
// number, the invoice date and the total with its currency.
package extract

import (
	"regexp"
	"strconv"
	"strings"
)

// Invoice is what was found; empty fields were not.
type Invoice struct {
	InvoiceNumber string `json:"invoiceNumber,omitempty"`
	Date          string `json:"date,omitempty"`  // as written
	Total         string `json:"total,omitempty"` // 2983.55
	Currency      string `json:"currency,omitempty"`
	IBAN          string `json:"iban,omitempty"` // without spaces
	UID           string `json:"uid,omitempty"`  // CHE-123.456.789
}

var (
	ibanRE     = regexp.MustCompile(`\b([A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?)\b`)
	uidRE      = regexp.MustCompile(`\bCHE[- ]?(\d{3})[. ]?(\d{3})[. ]?(\d{3})\b`)
	numberRE   = regexp.MustCompile(`(?i)\b(?:rechnung|invoice|facture|fattura|rechnungs-?nr|invoice no)\b\.?\s*(?:nr\.?|no\.?|n°|n\.|number|nummer|num\.)?\s*[:#]?\s*([A-Z]{0,4}[-/]?\d[A-Z0-9\-/]{1,20})`)
	dateRE     = regexp.MustCompile(`\b(\d{1,2}\.\d{1,2}\.\d{4}|\d{4}-\d{2}-\d{2})\b`)
	totalRE    = regexp.MustCompile(`(?i)^.*\b(total|totale|gesamt|gesamtbetrag|rechnungsbetrag|montant total|amount due|à payer|zu bezahlen|totale da pagare)\b.*$`)
	amountRE   = regexp.MustCompile(`(?:(CHF|EUR|USD|Fr\.)\s?)?(\d{1,3}(?:['’ ]\d{3})*(?:[.,]\d{2})|\d{1,3}(?:['’]\d{3})*(?:\.[-–]{1,2}))\s?(CHF|EUR|USD)?`)
	currencyRE = regexp.MustCompile(`\b(CHF|EUR|USD)\b`)
)

// Read extracts an invoice's data from its text.
func Read(text string) Invoice {
	var inv Invoice
	for _, m := range ibanRE.FindAllStringSubmatch(text, -1) {
		if c := strings.ReplaceAll(m[1], " ", ""); validIBAN(c) {
			inv.IBAN = c
			break
		}
	}
	for _, m := range uidRE.FindAllStringSubmatch(text, -1) {
		if validUID(m[1] + m[2] + m[3]) {
			inv.UID = "CHE-" + m[1] + "." + m[2] + "." + m[3]
			break
		}
	}
	if m := numberRE.FindStringSubmatch(text); m != nil {
		inv.InvoiceNumber = m[1]
	}
	if m := dateRE.FindStringSubmatch(text); m != nil {
		inv.Date = m[1]
	}
	// The total: the last amount on the last line that says "total".
	for _, line := range strings.Split(text, "\n") {
		if !totalRE.MatchString(line) || strings.Contains(strings.ToLower(line), "subtotal") || strings.Contains(strings.ToLower(line), "zwischentotal") {
			continue
		}
		ams := amountRE.FindAllStringSubmatch(line, -1)
		if len(ams) == 0 {
			continue
		}
		a := ams[len(ams)-1]
		inv.Total = normaliseAmount(a[2])
		switch {
		case a[1] != "" && a[1] != "Fr.":
			inv.Currency = a[1]
		case a[3] != "":
			inv.Currency = a[3]
		case a[1] == "Fr.":
			inv.Currency = "CHF"
		default:
			if c := currencyRE.FindString(line); c != "" {
				inv.Currency = c
			}
		}
	}
	if inv.Total != "" && inv.Currency == "" {
		if c := currencyRE.FindString(text); c != "" {
			inv.Currency = c
		}
	}
	return inv
}

// normaliseAmount: "2'983.55" → "2983.55", "780.–" → "780.00".
func normaliseAmount(s string) string {
	s = strings.NewReplacer("'", "", "’", "", " ", "").Replace(s)
	s = strings.TrimRight(s, "-–")
	s = strings.TrimSuffix(s, ".")
	if i := strings.LastIndexAny(s, ".,"); i >= 0 && len(s)-i == 3 {
		return s[:i] + "." + s[i+1:]
	}
	return s + ".00"
}

func validIBAN(s string) bool {
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	s = s[4:] + s[:4]
	rem := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

// validUID checks the UID's check digit (eCH-0097: weights 5 4 3 2 7 6 5 4,
// 11 minus the sum mod 11; a result of 10 is never issued).
func validUID(d string) bool {
	if len(d) != 9 {
		return false
	}
	weights := []int{5, 4, 3, 2, 7, 6, 5, 4}
	sum := 0
	for i, w := range weights {
		sum += int(d[i]-'0') * w
	}
	check := 11 - sum%11
	if check == 11 {
		check = 0
	}
	last, _ := strconv.Atoi(d[8:])
	return check != 10 && check == last
}
