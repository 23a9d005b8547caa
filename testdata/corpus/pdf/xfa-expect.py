"""Print the label and shown value of each filled field of an XFA form, read
independently of the Go reader with Python's ElementTree: the expectations
of plugins/pdf/pdftext's XFA tests (classes/*.fields.tsv).

Usage, with the packets' object numbers from the AcroForm's /XFA array:
  qpdf --show-object=73 --filtered-stream-data F.pdf > datasets.xml
  qpdf --show-object=71 --filtered-stream-data F.pdf > template.xml
  python3 xfa-expect.py datasets.xml template.xml > F.fields.tsv

Rules (a reader's view): a data element with text binds the template field
or exclusion group at the same path of subform/field names (unnamed
subforms are no level); an exclusion group shows the caption of the button
whose on value (its first item) is the data; a check box whose data is its
on value (first item, default 1) shows Yes, its off (second, default 0) or
neutral value is unfilled; a label is the caption (words, without a
leading * or trailing colon), else the assist toolTip, else the assist
speak text, else the element name.
"""
import re, sys, xml.etree.ElementTree as ET
def local(t): return t.rsplit('}', 1)[-1]
def load(path):
    b = open(path, encoding='utf-8').read()
    return ET.fromstring(re.sub(r'&(?!#?\w+;)', '&amp;', b))
INLINE = {'span','b','i','u','sub','sup','a','em','strong','font'}
def words(e):
    out = []
    def rec(x):
        if local(x.tag) not in INLINE: out.append(' ')
        out.append(x.text or '')
        for c in x: rec(c)
        out.append(x.tail or '') if x is not e else None
    rec(e)
    return ' '.join(''.join(out).split())
def clean(s): return s.rstrip(': ').lstrip('* ').strip()
ds, tp = load(sys.argv[1]), load(sys.argv[2])
nodes = {}
def walk(e, scope):
    tag, name = local(e.tag), e.get('name')
    if tag == 'proto': return
    if tag in ('subform','exclGroup','field') and name: scope = scope + [name]
    if tag in ('field','exclGroup'):
        nodes.setdefault('/'.join(scope), e)
        if tag == 'exclGroup': return
    for c in e: walk(c, scope)
walk(tp, [])
def label(e):
    cap = e.find('{*}caption')
    for x in (cap, e.find('{*}assist/{*}toolTip'), e.find('{*}assist/{*}speak')):
        if x is not None and clean(words(x)): return clean(words(x))
    return ''
def items(e): return [[(x.text or '').strip() for x in it] for it in e.findall('{*}items')]
data = next(e for e in ds.iter() if local(e.tag) == 'data')
def leaves(e, path):
    if not len(e):
        v = ' '.join((e.text or '').split())
        if v: yield '/'.join(path), v
    for c in e: yield from leaves(c, path + [local(c.tag)])
for p, v in leaves(data, []):
    e = nodes.get(p)
    shown, lab = v, p.rsplit('/', 1)[-1]
    if e is not None:
        lab = label(e) or lab
        if local(e.tag) == 'exclGroup':
            for k in e.findall('{*}field'):
                it = items(k); on = it[0][0] if it and it[0] else '1'
                if on == v: shown = clean(words(k.find('{*}caption'))) if k.find('{*}caption') is not None else k.get('name')
        else:
            ui = e.find('{*}ui')
            if ui is not None and len(ui) and local(ui[0].tag) == 'checkButton':
                it = (items(e) or [[]])[0] + ['1','0','2'][len((items(e) or [[]])[0]):]
                if v == it[0]: shown = 'Yes'
                elif v in it[1:3]: continue
    print(f'{lab}\t{shown}')
