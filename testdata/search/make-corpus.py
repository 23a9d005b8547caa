#!/usr/bin/env python3
"""Makes the search evaluation corpus from Debian packages (see README.md).

Debian Reference chapter 1 (packages debian-reference-{en,de,fr,it,ja} 2.100,
/usr/share/debian-reference/ch01.LANG.html): one page per section.
The GIMP user manual in Korean (package gimp-help-ko 2.10.34-2,
/usr/share/gimp/2.0/help/ko/): one page per HTML page with more than 400
Hangul syllables.
"""
import glob, html, os, re

def text_of(fragment):
    fragment = re.sub(r'(?s)<(script|style|head)\b.*?</\1>', ' ', fragment)
    fragment = re.sub(r'(?i)<br\s*/?>|</(p|div|li|tr|h\d|pre|dt|dd)>', '\n', fragment)
    t = html.unescape(re.sub(r'<[^>]+>', ' ', fragment))
    lines = [re.sub(r'[ \t\u00a0]+', ' ', l).strip() for l in t.split('\n')]
    return '\n'.join(l for l in lines if l)

def write(path, pages):
    with open(path, 'w', encoding='utf-8') as out:
        for i, (title, body) in enumerate(pages, 1):
            out.write(f'## page {i}: {title}\n{body}\n')

for lang in ['en', 'de', 'fr', 'it', 'ja']:
    s = open(f'/usr/share/debian-reference/ch01.{lang}.html', encoding='utf-8').read()
    heads = list(re.finditer(r'<h([234]) class="title"[^>]*>(.*?)</h\1>', s, re.S))
    pages = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(s)
        title = text_of(h.group(2)).replace('\n', ' ')
        pages.append((title, text_of(s[h.start():end])))
    write(f'debian-reference-ch01.{lang}.txt', pages)

pages = []
for f in sorted(glob.glob('/usr/share/gimp/2.0/help/ko/*.html')):
    if os.path.basename(f) in ('gimp-help-index.html', 'index.html'):
        continue
    s = open(f, encoding='utf-8', errors='replace').read()
    body = text_of(s)
    if len(re.findall(r'[\uac00-\ud7a3]', body)) <= 400:
        continue
    m = re.search(r'<title>(.*?)</title>', s, re.S)
    pages.append((text_of(m.group(1)).replace('\n', ' ') + ' (' + os.path.basename(f) + ')', body))
write('gimp-help.ko.txt', pages)
