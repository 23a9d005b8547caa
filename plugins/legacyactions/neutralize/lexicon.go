package neutralize

import (
	_ "embed"
	"strings"
	"sync"
)

//go:embed data/givennames.txt
var givenNamesData string

// listedGiven holds data/givennames.txt (see data/README.md): 65,786 given
// names, lower case. It backs only "given name + capitalised word".
var listedGiven = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool, 70000)
	for _, n := range strings.Split(givenNamesData, "\n") {
		if n != "" {
			m[n] = true
		}
	}
	return m
})

// The word lists the name detector leans on. They were written for this
// package from general knowledge of the names and letter conventions of
// Switzerland's languages and English (no list was copied); they are
// released with the project under its licence. They were tuned on the dev
// half of testdata/corpus only (see corpus_test.go).

// givenNames are frequent given names in Switzerland (German, French,
// Italian, Romansh speaking parts, and its larger immigrant communities)
// and in English. A given name followed by a capitalised word is taken as a
// person's name; alone it is one unless it is also a word (ambiguousGiven).
var givenNames = set(`
Aaron Adam Adrian Adriana Agnes Alain Alban Albert Alessandro Alessia Alex Alexander Alexandra Alexandre Alfred Alice Alina Aline
Amélie Ana Andrea Andreas André Andrée Angela Angelo Anita Anja Anna Anne Annette Anouk Antoine Anton Antonio Arnaud Arthur Astrid
Barbara Bastian Beat Beatrice Beatrix Ben Benedikt Benjamin Benoît Bernadette Bernard Bernhard Bettina Bianca Brigitte Bruno
Camille Carla Carlo Carmen Caroline Catherine Cécile Céline Chantal Charles Charlotte Chiara Christian Christina Christine Christoph
Claire Clara Claude Claudia Claudio Colin Corinne Cornelia Daniel Daniela Daniele David Denis Denise Didier Dominik Dominique Doris
Edith Elena Elias Elisabeth Elise Emil Emilia Emma Eric Erika Erwin Esther Eva Fabian Fabienne Fabio Fabrice Federica Felix Florence
Florian Francesca Francesco Franziska François Françoise Frédéric Gabriel Gabriela Gabriele Georg Georges Gerhard Gian Gianluca
Gilles Giorgio Giovanni Giulia Giuseppe Gregor Guido Hannah Hanna Hans Hansjörg Hanspeter Heidi Heinz Helen Helena Hélène Hugo
Ines Irene Isabelle Ivan Jacqueline Jacques Jakob Jan Jana Jasmin Jean Jeanne Jennifer Jérôme Johanna Johannes Jonas Jonathan
Josef Joël Judith Julia Julian Julie Julien Jürg Karin Katharina Katja Kevin Laura Laurent Lea Léa Leon Léon Linda Lisa Livia Lorenz
Luca Lucas Lucia Lukas Luis Luzia Lydia Manuel Manuela Marc Marcel Marco Margrit Maria Marianne Marie Mario Markus Marion Martin
Martina Mathias Matteo Matthias Mattia Max Maximilian Melanie Michael Michel Michèle Michelle Mirjam Monika Monique Nadia Nadine
Natalie Nathalie Nicolas Nicole Niklaus Nils Nina Noah Noemi Norbert Olivier Oliver Pascal Pascale Patricia Patrick Paul Paula
Peter Petra Philipp Philippe Pierre Pietro Quentin Rafael Raphael Regula Reto Roberto Robert Roger Roland Roman Ruth Sabine Sabrina
Samuel Sandra Sara Sarah Silvia Simon Simone Sophie Stefan Stefanie Stephan Susanne Sylvie Tamara Thomas Theo Thierry Tobias Ueli
Urs Ursula Valentin Valérie Vanessa Verena Véronique Vincent Walter Werner Yves Yvonne Zoé
Aylin Ahmet Mehmet Fatima Ali Mohammed Arben Besnik Drita Dragan Milan Nikola Ana Marija Luka Petar João Pedro Rui Sofia Inês
James John Robert Mary Patricia Jennifer William Richard Joseph Susan Jessica Karen Sarah Nancy Emily Oliver Jack Harry George
Charlotte Amelia Olivia Sophia Emma Isabella Mia Liam Ethan Mason Lucy Rachel Rebecca Hannah Matthew Andrew Steven Kenneth Brian
Seraina Ladina Flurina Curdin Gian-Marco Jon Men Mengia Nuot Reto
Ruedi Vreni Toni Köbi Sepp Hansruedi Fritz Housi Dänu Sämi Chrigi Beni Röbi Heiri Kari Migg Ändu Fredi Trudi Käthi Rösli Bethli Fränzi Susi Mäxu
`)

// ambiguousGiven are given names that are also words (or, capitalised, a
// currency, a colour, a town): they count only with a surname or a cue.
var ambiguousGiven = set(`Mark Will Frank Grace May June Rosa Ernst Bill Jean Florence Christian Max Hans Beat Claude Urs Roman`)

// titles precede a name. Abbreviations are listed without their dot;
// Italian and French put them in lower case inside a sentence.
var titles = set(`signor signora signorina sig dott monsieur madame mister ` +
	`Herr Herrn Frau Hr Fr Dr Prof Mr Mrs Ms Miss Mister Monsieur Madame Mme Mlle Mademoiselle M Sig Signor Signora Signorina Dott Dottoressa Ing Sir Dame Maître Me Pfarrer Pfarrerin`)

// degrees may follow a title before the name ("Dr. med. Anna Keller").
var degrees = set(`med iur phil oec rer nat dipl Dipl lic sc techn pol dent vet h.c MBA MSc BSc PhD`)

// salutations open a letter or a mail and are followed by a name.
var salutations = set(`Liebe Lieber Liebes Hallo Hoi Hoj Grüezi Grüessech Salü Sali Dear Hi Hello Hey Bonjour Bonsoir Cher Chère Chers Salut Coucou Ciao Caro Cara Gentile Buongiorno`)

// closings end a letter; the name of who wrote it follows on the next line
// (or after a comma on the same line).
var closings = []string{
	"freundliche grüsse", "freundliche grüße", "freundlichen grüssen", "freundlichen grüßen", "beste grüsse", "beste grüße",
	"liebe grüsse", "liebe grüße", "herzliche grüsse", "herzliche grüße", "viele grüsse", "viele grüße", "gruss", "gruß", "grüsse", "grüße",
	"best regards", "kind regards", "warm regards", "regards", "best wishes", "sincerely", "yours sincerely", "yours faithfully", "cheers", "thanks", "many thanks", "best",
	"cordialement", "meilleures salutations", "salutations distinguées", "sincères salutations", "bien à vous", "avec mes meilleures salutations", "bien cordialement", "amicalement",
	"cordiali saluti", "distinti saluti", "saluti", "liebi grüess", "liebi grüessli", "härzlichi grüess", "en liebe gruess", "liebe gruess", "gruess", "grüessli", "bis bald", "mit besten grüssen", "mit freundlichen grüssen", "mit freundlichen grüßen", "en vous remerciant",
}

// labels name a person field ("Name: Anna Meier", "Von: ...").
var labels = []string{
	"name", "vorname", "nachname", "familienname", "vor- und nachname", "nom", "prénom", "nom de famille", "nome", "cognome",
	"first name", "last name", "surname", "full name", "given name", "contact", "contact person", "kontakt", "kontaktperson",
	"ansprechpartner", "ansprechpartnerin", "ansprechperson", "sachbearbeiter", "sachbearbeiterin", "bearbeitet von", "verantwortlich",
	"mieter", "mieterin", "vermieter", "vermieterin", "patient", "patientin", "kunde", "kundin", "auftraggeber", "auftraggeberin",
	"verfasser", "verfasserin", "autor", "autorin", "author", "employee", "mitarbeiter", "mitarbeiterin", "collaborateur", "collaboratrice",
	"kontoinhaber", "kontoinhaberin", "account holder", "titulaire", "titulaire du compte", "inhaber", "inhaberin", "von", "from", "an", "to", "cc", "kopie",
	"empfänger", "empfängerin", "absender", "absenderin", "destinataire", "expéditeur", "de", "à", "teilnehmer", "teilnehmende", "participants",
	"anwesend", "présents", "present", "attendees", "protokoll", "procès-verbal", "minutes", "unterschrift", "signature", "gez", "visum",
	"referenz", "referenzen", "references", "référence", "références", "client", "cliente", "tenant", "landlord", "locataire", "bailleur",
	"requested by", "approved by", "genehmigt von", "erstellt von", "geprüft von", "prepared by", "établi par", "approuvé par", "reviewer", "prüfer",
	"vorgesetzter", "vorgesetzte", "manager", "supervisor", "responsable", "interlocuteur", "interlocutrice", "person", "personne",
	"ehepartner", "ehepartnerin", "partner", "partnerin", "conjoint", "conjointe", "kind", "kinder", "enfant", "enfants", "vater", "mutter",
}

// particles join the parts of a surname ("von Gunten", "de Montmollin").
var particles = set(`von vom van de di da du del della dos der den le la zu zur ter ten d' D'`)

// notNames are capitalised words that are never a person's name here:
// function words that open sentences, months, days, company forms, the
// nouns of salutations ("Liebe Kolleginnen") and frequent business nouns.
var notNames = set(`
Der Die Das Den Dem Des Ein Eine Einer Eines Einem Einen Und Oder Aber Wir Ich Sie Er Es Ihr Ihre Ihren Ihrem Ihrer Unser Unsere Mein Meine
Bitte Danke Vielen Dank Sehr Geehrte Geehrter Gerne Leider Anbei Beiliegend Betreff Betrifft Datum Ort Hiermit Wie Was Wer Wo Wann Warum Im In Am An Auf Aus Bei Mit Nach Von Vom Zu Zur Zum Für Über Unter Vor Seit Bis Ab Per Pro Gemäss Laut
The A An And Or But We I You He She It They Our Your My Please Thank Thanks Dear Yours Best Kind Regards Re Subject Date Hello Hi All Team This That These Those If When As At On In Of For To From With By
Le La Les Un Une Des Du De Et Ou Mais Nous Je Vous Il Elle Ils Elles Notre Votre Mon Ma Mes Merci Madame Monsieur Mesdames Messieurs Objet Concerne Bonjour Chers Chères Cher Chère
Il Lo Gli Una Di Da E O Ma Noi Io Lei Grazie Gentile Oggetto
Januar Februar März April Mai Juni Juli August September Oktober November Dezember January February March May June July October December
Janvier Février Mars Avril Juin Juillet Août Septembre Octobre Novembre Décembre Montag Dienstag Mittwoch Donnerstag Freitag Samstag Sonntag
Monday Tuesday Wednesday Thursday Friday Saturday Sunday Lundi Mardi Mercredi Jeudi Vendredi Samedi Dimanche
AG GmbH SA Sàrl Sarl Ltd Inc LLC KG Co Genossenschaft Stiftung Verein Holding Group Bank Kantonalbank Versicherung Treuhand
Kolleginnen Kollegen Kollege Kollegin Damen Herren Team Alle Allerseits Zusammen Kunden Kundinnen Mitglieder Mitarbeitende Colleagues Everyone Folks Customers Collègues Tous Toutes Tutti
Rechnung Rechnungen Betrag Konto Vertrag Abteilung Projekt Projektleiter Projektleiterin Leiter Leiterin Geschäftsführer Geschäftsführerin Direktor Direktorin Verwaltungsrat Finanzen Personal Buchhaltung
Invoice Account Amount Contract Department Project Manager Director Finance Accounting Facture Compte Montant Contrat Département Projet Directeur Directrice
Telefon Tel Mobile Natel Fax Email E-Mail Mail IBAN AHV AVS BIC SWIFT CHF EUR USD MWST MwSt TVA VAT UID Nr No Ref Seite Page
Zürich Bern Basel Genf Genève Lausanne Luzern Lugano Winterthur St Gallen Zug Biel Thun Aarau Chur Sion Neuchâtel Fribourg Schweiz Suisse Switzerland Svizzera Deutschland Germany France Italia London
Strasse Str Weg Gasse Platz Rue Avenue Chemin Via Postfach Case Postale
Lebenslauf Curriculum Vitae Ausbildung Berufserfahrung Sprachen Kenntnisse Formation Expérience Langues Education Experience Skills Languages
Deutsch Englisch Französisch Italienisch German English French Italian Allemand Anglais Français Italien
Herzliche Freundliche Beste Liebe Viele Mit Grüsse Grüße Gruss Gruß Cordialement Salutations Sincerely Cheers
Kind Kinder Vater Mutter Partner Partnerin
Eltern Parents Freunde Freundinnen Nachbarn Anwohner Anwohnende Genossenschafter Genossenschafterinnen Studierende Teilnehmende Mitglied
Firma Stelle Summer Guest Head Chair Customer Agent User Bot Support Moderator System Admin Morgen Abend Mittag Tag Tage Tagen Woche Wochen Jahr Jahre Monat Monate Consœur Confrère Consoeur Kollegin Collègue Chère Cher Papi Mami Maman Papa Oma Opa Tante Onkel
`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// relations precede a name: "meinem Bruder Dario", "my colleague Sam".
var relations = set(`bruder schwester sohn tochter ehemann ehefrau mann partner partnerin kollege kollegin chef chefin nachbar nachbarin
brother sister son daughter husband wife colleague boss neighbour neighbor friend
frère sœur soeur fils fille mari épouse époux collègue voisin voisine ami amie
fratello sorella figlio figlia marito moglie collega amico amica`)

// companyWords around a surname make it part of a company's name
// ("Treuhand Widmer GmbH", "Hartmann Consulting"), which is not a person.
var companyWords = set(`AG GmbH SA Sàrl Sarl Ltd Inc LLC LLP KG Co Consulting Partners Partner Treuhand Immobilien Architekten Holding Group Studio Advisory Associates
Bäckerei Metzgerei Garage Malerei Schreinerei Kanzlei Praxis Druckerei Gärtnerei Transporte Elektro Sanitär Café Restaurant Hotel Boutique Atelier Cabinet Étude Régie
Club Verein Association Society Foundation Stiftung Clinic Klinik School Schule Hospital Spital
Systems Solutions Technologies Software Engineering Logistics Labs Analytics Glaserei Spenglerei Käserei
Team Department Abteilung Office Service Services Banque Kantonalbank Assurance Assurances Versicherung Versicherungen Immobilier Inkasso Gruppe Groupe`)

// nameColumns head a table column of names (its first column).
var nameColumns = set(`name namen mitarbeiter mitarbeiterin mitarbeiter/in mitarbeitende employee employees staff speaker speakers teilnehmer teilnehmerin teilnehmer/in teilnehmende participant participants nom nome person personne mieter mieterin kunde kundin customer client member mitglied patient patientin student schüler schülerin candidate kandidat kandidatin collaborateur collaboratrice dipendente`)

// labelWords make a line's "…:" a person field even when the label is not
// one of labels ("Name, Vorname:", "Nom et prénom :").
var labelWords = set(`name vorname nachname nom prénom nome cognome surname firstname`)

// placeWords come before a place rather than a person ("in Baden", "à
// Bulle", "from Dublin"): a lone given name after them is not taken.
var placeWords = set(`in im am an auf aus bei nach von vom zu zum zur ab via of from at to near à au aux de du des en par pour di da a per con mit für über unter vor seit bis the der die das den dem le la les il lo`)
