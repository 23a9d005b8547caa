# Builds candide-3-chapters.epub: the first three chapters of Voltaire's
# Candide (public domain; the text of golang.org/x/text's
# encoding/testdata/candide-utf-8.txt, from Project Gutenberg 4650) as an
# EPUB 3 book written by the specification (OCF container, OPF package,
# XHTML content documents, an EPUB 3 nav document and an EPUB 2 NCX), the
# spine in an order other than the manifest's.
# Run: python3 make-epub.py PATH/TO/candide-utf-8.txt
import html, re, sys, zipfile

text = open(sys.argv[1], encoding="utf-8").read()
parts = re.split(r"\n(CHAPITRE [IVX]+\.?)\n", text)
chapters = []
for i in range(1, 7, 2):
    head, body = parts[i], parts[i + 1].strip()
    paras = [p.strip().replace("\n", " ") for p in body.split("\n\n") if p.strip()]
    chapters.append((head, paras[0], paras[1:]))

def xhtml(title, subtitle, paras):
    ps = "\n".join(f"<p>{html.escape(p)}</p>" for p in paras)
    return f"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="fr">
<head><title>{html.escape(title)}</title></head>
<body><section epub:type="chapter"><h2>{html.escape(title)}</h2><p class="summary">{html.escape(subtitle)}</p>
{ps}
</section></body></html>
"""

with zipfile.ZipFile("candide-3-chapters.epub", "w") as z:
    z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
    z.writestr("META-INF/container.xml", """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
""", compress_type=zipfile.ZIP_DEFLATED)
    items, spine, navli, navpoints = [], [], [], []
    # The manifest lists the chapters last first; the spine gives the order.
    for n in (3, 2, 1):
        items.append(f'<item id="c{n}" href="text/chapter{n}.xhtml" media-type="application/xhtml+xml"/>')
    for n, (head, sub, paras) in enumerate(chapters, 1):
        spine.append(f'<itemref idref="c{n}"/>')
        z.writestr(f"OEBPS/text/chapter{n}.xhtml", xhtml(head, sub, paras), compress_type=zipfile.ZIP_DEFLATED)
        label = f"{head} {sub.split(',')[0]}"
        navli.append(f'<li><a href="text/chapter{n}.xhtml">{html.escape(label)}</a></li>')
        navpoints.append(f'<navPoint id="n{n}" playOrder="{n}"><navLabel><text>{html.escape(label)}</text></navLabel><content src="text/chapter{n}.xhtml"/></navPoint>')
    z.writestr("OEBPS/content.opf", f"""<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:identifier id="uid">urn:uuid:5b1c8e2a-4f0e-4d7e-9a57-candide0001</dc:identifier>
<dc:title>Candide, ou l'Optimisme</dc:title><dc:creator>Voltaire</dc:creator><dc:language>fr</dc:language>
<meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>
</metadata>
<manifest>
<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
{chr(10).join(items)}
</manifest>
<spine toc="ncx">{''.join(spine)}</spine>
</package>
""", compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("OEBPS/nav.xhtml", f"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Table</title></head>
<body><nav epub:type="toc"><h1>Table des matières</h1><ol>{''.join(navli)}</ol></nav></body></html>
""", compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("OEBPS/toc.ncx", f"""<?xml version="1.0" encoding="utf-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head/><docTitle><text>Candide</text></docTitle>
<navMap>{''.join(navpoints)}</navMap></ncx>
""", compress_type=zipfile.ZIP_DEFLATED)
