#!/usr/bin/env python3
"""Builds lo-altchunk.docx: LibreOffice's DOCX save of lo-altchunk-main.fodt
with three w:altChunk elements added, importing LibreOffice's HTML save of
lo-altchunk-html.fodt, its RTF save of lo-altchunk-rtf.fodt and its DOCX
save of lo-altchunk-docx.fodt, as ECMA-376 Part 1 (5th ed.) 17.17.2.1
"altChunk (Anchor for Imported External Content)" and 17.17.2 "Alternative
Format Import" describe: a w:altChunk in the body whose r:id names a
relationship of type .../relationships/aFChunk (Part 1, 15.2.1
"Alternative Format Import Part") to a part whose content type says its
format (text/html, application/rtf, and the WordprocessingML main
document type for a whole .docx package, as Word and the Open XML SDK's
AlternativeFormatImportPartType.WordprocessingML store it).

Run in this folder after the four soffice --convert-to saves:
    python3 make-altchunk.py
"""
import zipfile

SRC, OUT = "lo-altchunk-main.docx", "lo-altchunk.docx"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk"
chunks = [  # (id, part, content type, file)
    ("rIdAlt1", "word/afchunk1.htm", "text/html", "lo-altchunk-html.html"),
    ("rIdAlt2", "word/afchunk2.rtf", "application/rtf", "lo-altchunk-rtf.rtf"),
    ("rIdAlt3", "word/afchunk3.docx",
     "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
     "lo-altchunk-docx.docx"),
]

with zipfile.ZipFile(SRC) as z:
    parts = {n: z.read(n) for n in z.namelist()}

doc = parts["word/document.xml"].decode()
paras = doc.split("</w:p>")
# After the first paragraph the HTML part; after the second the RTF and
# the DOCX parts, one after the other.
paras[0] += '</w:p><w:altChunk r:id="rIdAlt1"/>'
paras[1] += '</w:p><w:altChunk r:id="rIdAlt2"/><w:altChunk r:id="rIdAlt3"/>'
doc = paras[0] + paras[1] + "</w:p>".join(paras[2:])
parts["word/document.xml"] = doc.encode()

rels = parts["word/_rels/document.xml.rels"].decode()
add = "".join(f'<Relationship Id="{i}" Type="{REL}" Target="{p[5:]}"/>' for i, p, _, _ in chunks)
parts["word/_rels/document.xml.rels"] = rels.replace("</Relationships>", add + "</Relationships>").encode()

ct = parts["[Content_Types].xml"].decode()
add = "".join(f'<Override PartName="/{p}" ContentType="{t}"/>' for _, p, t, _ in chunks)
parts["[Content_Types].xml"] = ct.replace("</Types>", add + "</Types>").encode()

for _, p, _, f in chunks:
    parts[p] = open(f, "rb").read()

with zipfile.ZipFile(OUT, "w", zipfile.ZIP_DEFLATED) as z:
    for n, b in parts.items():
        z.writestr(zipfile.ZipInfo(n, date_time=(2026, 12, 2, 0, 0, 0)), b, zipfile.ZIP_DEFLATED)
