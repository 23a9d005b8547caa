# Builds the constructed mails of this folder with Python's email package
# (a real producer of RFC 5322/MIME: encoded-words, quoted-printable,
# base64, RFC 2231 file names) and its mailbox module (mbox).
# Run from this folder: python3 make-mails.py
import mailbox
from email.message import EmailMessage
from email.headerregistry import Address
from email.utils import format_datetime
from email import policy
from email.generator import BytesGenerator
import datetime, io
from email.header import Header

corpus = "../"
docx = open(corpus + "office/docx/textract-paragraphs_and_tables.docx", "rb").read()
pdf = open(corpus + "pdf/classes/annots-pdfcpu-freetext-no-appearance.pdf", "rb").read()

def save(msg, name, raw=None, cte_policy=policy.SMTP):
    """Writes msg; raw replaces top-level headers by values written as
    given (encoded-words in legacy charsets, which the email package would
    re-encode in UTF-8)."""
    buf = io.BytesIO()
    BytesGenerator(buf, policy=cte_policy).flatten(msg)
    out = buf.getvalue()
    if raw:
        head, sep, body = out.partition(b"\r\n\r\n")
        lines, keep = head.split(b"\r\n"), []
        skipping = False
        for l in lines:
            if l[:1] in (b" ", b"\t"):
                if not skipping:
                    keep.append(l)
                continue
            k = l.split(b":", 1)[0].decode()
            skipping = k in raw
            keep.append((k + ": " + raw[k]).encode() if skipping else l)
        out = b"\r\n".join(keep) + sep + body
    open(name, "wb").write(out)
    return out

# 1. A report mail: Czech plain text in ISO-8859-2 quoted-printable and an
# HTML alternative, a UTF-8 subject (encoded-word), a Latin-1 sender name,
# a DOCX, a PDF and a KOI8-R text attached, one with a non-ASCII name.
m = EmailMessage()
m["From"] = "Zoe <zoe.mueller@example.org>"  # written in ISO-8859-1 by save
m["To"] = [Address("Jiří Dvořák", "jiri.dvorak", "example.cz"), Address("Team", "team", "example.org")]
m["Cc"] = "Oleg <oleg@example.ru>"  # written in KOI8-R by save
m["Subject"] = "Čtvrtletní zpráva – výsledky a přílohy"
m["Date"] = format_datetime(datetime.datetime(2024, 3, 14, 9, 26, 53, tzinfo=datetime.timezone(datetime.timedelta(hours=1))))
m["Message-ID"] = "<report-2024q1@example.org>"
m.set_content("Dobrý den,\n\nv příloze posílám čtvrtletní zprávu a rozpočet.\nPříliš žluťoučký kůň úpěl ďábelské ódy.\n\nS pozdravem\nZoë\n", charset="iso-8859-2", cte="quoted-printable")
m.add_alternative("<html><body><p>Dobrý den,</p><p>v příloze posílám <b>čtvrtletní zprávu</b>.</p></body></html>", subtype="html", charset="utf-8")
m.add_attachment(docx, maintype="application", subtype="vnd.openxmlformats-officedocument.wordprocessingml.document", filename="Rozpočet 2024.docx")
m.add_attachment(pdf, maintype="application", subtype="pdf", filename="annotations.pdf")
m.add_attachment("Отчёт о продажах за первый квартал: рост на двенадцать процентов.\n".encode("koi8-r"), maintype="text", subtype="plain", filename="otchet.txt", params={"charset": "koi8-r"})
report = save(m, "report-iso-8859-2-attachments.eml", raw={
    "From": Header("Zoë Müller", "iso-8859-1").encode() + " <zoe.mueller@example.org>",
    "Cc": Header("Олег Петров", "koi8-r").encode() + " <oleg@example.ru>",
})

# 2. A Japanese HTML-only mail in ISO-2022-JP, the classic Japanese mail
# charset, 7bit.
j = EmailMessage()
j["From"] = Address("山田 太郎", "taro.yamada", "example.jp")
j["To"] = Address("", "sato", "example.jp")
j["Subject"] = "minutes"  # written in ISO-2022-JP by save
j["Date"] = "Tue, 02 Apr 2024 18:05:00 +0900"
j.set_content("<html><head><title>議事録</title></head><body><h1>議事録</h1><p>本日の会議の議事録を送付いたします。ご確認ください。</p></body></html>", subtype="html", charset="iso-2022-jp", cte="7bit")
save(j, "minutes-iso-2022-jp-html-only.eml", raw={
    "From": Header("山田 太郎", "iso-2022-jp").encode() + " <taro.yamada@example.jp>",
    "Subject": Header("会議の議事録について", "iso-2022-jp").encode(),
})

# 3. A forwarded mail: the report attached as message/rfc822.
f = EmailMessage()
f["From"] = "Team <team@example.org>"
f["To"] = "archive@example.org"
f["Subject"] = "Fwd: =?utf-8?q?=C4=8Ctvrtletn=C3=AD_zpr=C3=A1va?="
f["Date"] = "Fri, 15 Mar 2024 10:00:00 +0000"
f.set_content("Forwarding the quarterly report with its attachments.\n")
from email import message_from_bytes
inner = message_from_bytes(report, policy=policy.default)
f.add_attachment(inner)
save(f, "forwarded-report.eml")

# 4. A mailbox of three mails, one with a body line "From " that mbox
# quotes as ">From ".
box = mailbox.mbox("list-archive.mbox", create=True)
box.lock()
for i, (who, subj, body) in enumerate([
    ("alice@example.org", "Planning meeting", "From the notes: the planning meeting moves to Thursday.\n"),
    ("bob@example.org", "Re: Planning meeting", "Thursday works for me.\n\n> the planning meeting moves to Thursday.\n"),
    ("carol@example.org", "Budget spreadsheet", "Attached is the budget.\n"),
]):
    e = EmailMessage()
    e["From"] = who
    e["To"] = "list@example.org"
    e["Subject"] = subj
    e["Date"] = f"Mon, 0{i+1} Jul 2024 12:00:00 +0000"
    e.set_content(body)
    if i == 2:
        e.add_attachment(docx, maintype="application", subtype="vnd.openxmlformats-officedocument.wordprocessingml.document", filename="budget.docx")
    box.add(e)
box.flush()
box.unlock()
