# Builds the mails of make-lossprobe.sh (which passes an armored PGP
# message) with Python 3's email package and binascii (uuencode).
import sys, binascii
from email.message import EmailMessage
from email.mime.multipart import MIMEMultipart
from email.mime.application import MIMEApplication
from email.mime.base import MIMEBase
from email import policy

pgp = open(sys.argv[1]).read()
CRLF = "\r\n"

def head(frm, to, subj, date, extra=""):
    return (f"From: {frm}\r\nTo: {to}\r\nSubject: {subj}\r\nDate: {date}\r\n"
            f"Message-ID: <{sum(map(ord, subj))}@example.org>\r\nMIME-Version: 1.0\r\n" + extra)

def write(name, s):
    open(name, "wb").write(s.encode("utf-8") if isinstance(s, str) else s)

# PGP/MIME (RFC 3156): multipart/encrypted with the armored message.
m = MIMEMultipart("encrypted", protocol="application/pgp-encrypted")
v = MIMEApplication("Version: 1\n", "pgp-encrypted", _encoder=lambda p: None)
m.attach(v)
e = MIMEApplication(pgp, "octet-stream", _encoder=lambda p: None)
e.add_header("Content-Disposition", "inline", filename="encrypted.asc")
m.attach(e)
m["From"], m["To"], m["Subject"], m["Date"] = "Alice Sender <alice@example.org>", "bob@example.org", "Confidential: merger date", "Tue, 05 Mar 2024 10:00:00 +0100"
write("pgp-mime-encrypted.eml", m.as_bytes(policy=policy.SMTP))

# Inline PGP: the armored message is the text/plain body.
write("pgp-inline-encrypted.eml", head("Alice Sender <alice@example.org>", "bob@example.org", "Confidential: merger date", "Tue, 05 Mar 2024 10:00:00 +0100",
      "Content-Type: text/plain; charset=us-ascii\r\n") + "\r\n" + pgp.replace("\n", "\r\n"))

# UTF-7 (RFC 2152): a body and a subject encoded-word in utf-7.
body = "Grüße aus Zürich: die Präsentation für Montag liegt bei. Preis 25 € – ¡olé!\r\n"
subj = "=?utf-7?Q?" + "Präsentation für Montag".encode("utf-7").decode("ascii").replace(" ", "_") + "?="
write("utf-7-body.eml", head("Jörg Brünner <joerg@example.de>", "team@example.de", subj, "Mon, 04 Mar 2024 09:15:00 +0100",
      "Content-Type: text/plain; charset=utf-7\r\nContent-Transfer-Encoding: 7bit\r\n") + "\r\n" + body.encode("utf-7").decode("ascii"))

# format=flowed (RFC 3676): soft line breaks (a space before CRLF), a
# space-stuffed line, a quoted flowed paragraph and a signature separator.
flowed = ("Dear team, the quarterly review of the procurement \r\n"
          "guidelines is scheduled for Thursday afternoon in the large \r\n"
          "conference room.\r\n"
          "\r\n"
          "> We asked whether the supplier onboarding checklist \r\n"
          "> covers export controls.\r\n"
          "\r\n"
          "  From now on every order above the threshold needs two \r\n"
          "signatures.\r\n"
          "\r\n"
          "-- \r\n"
          "Marta\r\n")
write("format-flowed.eml", head("Marta <marta@example.org>", "team@example.org", "Procurement review", "Wed, 06 Mar 2024 14:00:00 +0000",
      "Content-Type: text/plain; charset=utf-8; format=flowed; delsp=no\r\nContent-Transfer-Encoding: 7bit\r\n") + "\r\n" + flowed)

# uuencoded attachments inside a plain-text body (as old mailers and
# gateways wrote them).
def uu(name, data):
    out = f"begin 644 {name}\r\n"
    for i in range(0, len(data), 45):
        out += binascii.b2a_uu(data[i:i+45]).decode("ascii").rstrip("\n") + "\r\n"
    return out + "`\r\nend\r\n"
notes = ("Minutes of the harbour commission, 4 March 2024.\n"
         "The dredging contract goes to tender in April; the pilot boat is replaced.\n").encode()
csvdata = b"item,amount\ndredging,120000\npilot boat,450000\n"
write("uuencoded-attachments.eml", head("Harbour Office <office@harbour.example>", "board@harbour.example", "Minutes and budget", "Thu, 07 Mar 2024 08:00:00 +0000",
      "Content-Type: text/plain; charset=us-ascii\r\n") + "\r\n"
      "Please find the minutes and the budget attached.\r\n\r\n" + uu("minutes.txt", notes) + "\r\n" + uu("budget.csv", csvdata) + "\r\nRegards,\r\nThe harbour office\r\n")

# mboxo with an unquoted "From " line in a body (mboxo writers that do
# not quote, or a hand-edited box): it must not split the message.
box = ("From alice@example.org Mon Mar  4 09:00:00 2024\n"
       "From: Alice <alice@example.org>\nTo: bob@example.org\nSubject: Travel plans\nDate: Mon, 04 Mar 2024 09:00:00 +0000\n\n"
       "Hi Bob,\n\nFrom Monday to Wednesday I am in Lyon for the supplier audit.\n\n"
       "From Thursday on I am back in the office.\nAlice\n\n"
       "From bob@example.org Mon Mar  4 10:00:00 2024\n"
       "From: Bob <bob@example.org>\nTo: alice@example.org\nSubject: Re: Travel plans\nDate: Mon, 04 Mar 2024 10:00:00 +0000\n\n"
       "Thanks, the warehouse inventory can wait until Thursday.\nBob\n")
write("mboxo-unquoted-from.mbox", box)

# MHTML (RFC 2557): a saved web page, multipart/related with the HTML
# quoted-printable and an image by Content-Location.
html = ("<html><head><title>Opening hours</title></head><body><h1>Library opening hours</h1>"
        "<p>The reading room opens at 08:30 and closes at 19:00; on Saturdays the archive is closed.</p>"
        "<img src=\"logo.png\"></body></html>")
import quopri
png = binascii.a2b_base64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
mht = ("From: <Saved by Blink>\r\nSnapshot-Content-Location: https://library.example/hours\r\nSubject: Opening hours\r\n"
       "Date: Fri, 08 Mar 2024 12:00:00 -0000\r\nMIME-Version: 1.0\r\n"
       "Content-Type: multipart/related;\r\n\ttype=\"text/html\";\r\n\tboundary=\"----MultipartBoundary--x1\"\r\n\r\n"
       "------MultipartBoundary--x1\r\nContent-Type: text/html\r\nContent-ID: <frame-1@mhtml.blink>\r\n"
       "Content-Transfer-Encoding: quoted-printable\r\nContent-Location: https://library.example/hours\r\n\r\n"
       + quopri.encodestring(html.encode(), quotetabs=False).decode().replace("\n", "\r\n") + "\r\n"
       "------MultipartBoundary--x1\r\nContent-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
       "Content-Location: https://library.example/logo.png\r\n\r\n" + binascii.b2a_base64(png).decode().strip() + "\r\n"
       "------MultipartBoundary--x1--\r\n")
write("library-hours.mht", mht)
