# Writes outlines-camlidl-p1.pdf: page 1 of ../deb-camlidl-1.04.pdf with
# its text converted to outlines, as "convert text to outlines/curves" in
# Illustrator, Inkscape or a print driver leaves it: every glyph a filled
# vector path, no font, no text operator, no image. The outlines are
# poppler's: `pdftocairo -svg -f 1 -l 1` draws each glyph as an SVG
# <symbol> path placed by <use>; this script writes each placed glyph's
# path into the page's content stream (m/l/c/h, filled with f).
# Run from this folder: python3 make-outlines.py (needs poppler-utils).
import re, subprocess, zlib

svg = subprocess.run(["pdftocairo", "-svg", "-f", "1", "-l", "1", "../deb-camlidl-1.04.pdf", "-"],
                     check=True, capture_output=True).stdout.decode()
w, h = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups())
glyphs = dict(re.findall(r'<symbol overflow="visible" id="([^"]+)">\s*<path style="[^"]*" d="([^"]*)"', svg))
ops = []
# The first 400 glyphs (title, author, date, the first heading and
# paragraph) keep the file small.
for gid, x, y in re.findall(r'<use xlink:href="#([^"]+)" x="([\d.-]+)" y="([\d.-]+)"/>', svg)[:400]:
    x, y = float(x), float(y)
    toks = glyphs.get(gid, "").split()
    i, path = 0, []
    while i < len(toks):
        c = toks[i]
        if c in "ML":
            px, py = float(toks[i + 1]), float(toks[i + 2])
            path.append(f"{x + px:.2f} {h - (y + py):.2f} {'m' if c == 'M' else 'l'}")
            i += 3
        elif c == "C":
            pts = [float(t) for t in toks[i + 1:i + 7]]
            path.append(" ".join(f"{x + pts[k]:.2f} {h - (y + pts[k + 1]):.2f}" for k in (0, 2, 4)) + " c")
            i += 7
        elif c == "Z":
            path.append("h")
            i += 1
        else:
            raise SystemExit("unexpected path command " + c)
    if path:
        ops.append("\n".join(path) + "\nf")
stream = zlib.compress(("0 g\n" + "\n".join(ops) + "\n").encode(), 9)
objs = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w} {h}] /Resources << >> /Contents 4 0 R >>".encode(),
    b"<< /Length " + str(len(stream)).encode() + b" /Filter /FlateDecode >>\nstream\n" + stream + b"\nendstream",
    b"<< /Producer (make-outlines.py from pdftocairo -svg) >>",
]
out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
offs = []
for n, o in enumerate(objs, 1):
    offs.append(len(out))
    out += f"{n} 0 obj\n".encode() + o + b"\nendobj\n"
xref = len(out)
out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
for o in offs:
    out += f"{o:010d} 00000 n \n".encode()
out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R /Info 5 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
open("outlines-camlidl-p1.pdf", "wb").write(out)
