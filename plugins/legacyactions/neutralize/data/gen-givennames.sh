#!/bin/sh
# Regenerates givennames.txt: the given names of the npm package
# gender-detection-from-name 1.11.5 (MIT, (c) 2019 Davide Violante; its
# lists for de, en, fr, it, es, tr), less every name that is also a
# lower-case English word in Debian's wamerican word list (SCOWL), less
# names shorter than three letters. Needs npm and `apt-get install wamerican`.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent gender-detection-from-name@1.11.5 >/dev/null && tar xzf gender-detection-from-name-1.11.5.tgz)
for l in de en fr it es tr; do
	grep -o "^  \['[^']*'" "$tmp/package/names/$l.js" | sed "s/^  \['//; s/'\$//"
done | LC_ALL=C sort -u > "$tmp/all.txt"
grep -E '^[a-z]+$' /usr/share/dict/american-english | LC_ALL=C sort -u > "$tmp/words.txt"
LC_ALL=C comm -23 "$tmp/all.txt" "$tmp/words.txt" | awk 'length($0) >= 3' > "$(dirname "$0")/givennames.txt"
