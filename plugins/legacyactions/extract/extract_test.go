package extract

import "testing"

func TestRead(t *testing.T) {
	cases := []struct {
		name, text string
		want       Invoice
	}{
		{"English invoice", `INVOICE No. INV-88213
Date: 03.04.2025
VAT CHE-116.281.710 MWST
Workshop                                   2'400.00
                            Subtotal       2'760.00
                            Total CHF      2'983.55
IBAN: CH93 0076 2011 6238 5295 7`, Invoice{InvoiceNumber: "INV-88213", Date: "03.04.2025", Total: "2983.55", Currency: "CHF", IBAN: "CH9300762011623852957", UID: "CHE-116.281.710"}},
		{"German, total first, francs with a dash", `Rechnung Nr. 2025-044
Winterthur, 08.04.2025
Total zu bezahlen: Fr. 780.–
Konto CH6300700655152144265`, Invoice{InvoiceNumber: "2025-044", Date: "08.04.2025", Total: "780.00", Currency: "CHF", IBAN: "CH6300700655152144265"}},
		{"French, a wrong IBAN and a wrong UID are ignored", `FACTURE n° F/2025/0412 du 2025-06-02
IDE CHE-116.281.711 TVA
Montant total TTC : 1'240.50 CHF
IBAN CH93 0076 2011 6238 5295 8`, Invoice{InvoiceNumber: "F/2025/0412", Date: "2025-06-02", Total: "1240.50", Currency: "CHF"}},
		{"no invoice at all", "Liebe Anna, bis morgen!", Invoice{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Read(c.text); got != c.want {
				t.Fatalf("\ngot  %+v\nwant %+v", got, c.want)
			}
		})
	}
}
