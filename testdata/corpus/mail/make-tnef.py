# Writes winmail.dat and tnef-winmail.eml: a TNEF stream (MS-OXTNEF) as
# Outlook sends a rich-text mail, written here by the specification since
# no free TNEF encoder is packaged: the message's MAPI properties with its
# body as uncompressed RTF (PR_RTF_COMPRESSED, COMPTYPE "MELA"), and two
# attachments, each with its 8.3 title (attAttachTitle), its data
# (attAttachData) and its long file name (PR_ATTACH_LONG_FILENAME, Unicode)
# in its MAPI properties. The mail is written with Python 3's email: a
# plain-text part and winmail.dat as application/ms-tnef.
# Run from this folder: python3 make-tnef.py
import struct
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.mime.application import MIMEApplication
from email import policy

def attr(level, aid, data):
    return struct.pack("<BII", level, aid, len(data)) + data + struct.pack("<H", sum(data) & 0xFFFF)

def pad(b):
    return b + b"\0" * (-len(b) % 4)

def prop_unicode(pid, s):
    v = (s + "\0").encode("utf-16-le")
    return struct.pack("<HHII", 0x001F, pid, 1, len(v)) + pad(v)

def prop_binary(pid, v):
    return struct.pack("<HHII", 0x0102, pid, 1, len(v)) + pad(v)

def props(*ps):
    return struct.pack("<I", len(ps)) + b"".join(ps)

rtf = rb"{\rtf1\ansi\deff0 {\fonttbl {\f0 Calibri;}}\f0 The harbour budget for 2024 is approved; tenders open in April.\par}"
comp = struct.pack("<IIII", len(rtf) + 12, len(rtf), 0x414C454D, 0) + rtf

out = struct.pack("<IH", 0x223E9F78, 0x0001)
out += attr(1, 0x00089006, struct.pack("<I", 0x00010000))          # attTnefVersion
out += attr(1, 0x00069007, struct.pack("<II", 1252, 0))             # attOemCodepage
out += attr(1, 0x00078008, b"IPM.Microsoft Mail.Note\0")            # attMessageClass
out += attr(1, 0x00069003, props(prop_binary(0x1009, comp), prop_unicode(0x0037, "Harbour budget")))  # attMsgProps
files = [("QUARTE~1.TXT", "Quarterly report 2024.txt", b"Quarterly report: dredging finished, pilot boat ordered.\r\n"),
         ("TENDER~1.CSV", "Tender schedule.csv", b"lot,opens\r\ndredging,2024-04-02\r\npilot boat,2024-04-16\r\n")]
for short, long, data in files:
    out += attr(2, 0x00069002, struct.pack("<HIIIHI", 1, 0xFFFFFFFF, 0, 0, 0, 0)[:14])  # attAttachRendData
    out += attr(2, 0x00018010, short.encode("ascii") + b"\0")                         # attAttachTitle
    out += attr(2, 0x0006800F, data)                                                  # attAttachData
    out += attr(2, 0x00069005, props(prop_unicode(0x3707, long)))                     # attAttachment
open("winmail.dat", "wb").write(out)

m = MIMEMultipart("mixed")
m["From"], m["To"], m["Subject"] = "Harbour Office <office@harbour.example>", "board@harbour.example", "Harbour budget"
m["Date"] = "Fri, 08 Mar 2024 09:00:00 +0100"
m.attach(MIMEText("The budget is in the attached files.\n", "plain", "us-ascii"))
a = MIMEApplication(out, "ms-tnef")
a.add_header("Content-Disposition", "attachment", filename="winmail.dat")
m.attach(a)
open("tnef-winmail.eml", "wb").write(m.as_bytes(policy=policy.SMTP))
