#!/bin/sh
# Builds the encrypted ZIPs of this folder with real archivers, password
# "lossprobe": Info-ZIP zip 3.0 (-P: traditional PKWARE ZipCrypto) and
# p7zip 16.02 (7z -mem=AES256: WinZip AE-2, method 99). Both hold two
# short text files written here.
# Run from this folder: sh make-encrypted-zips.sh (needs zip, p7zip-full).
set -e
t=$(mktemp -d)
printf 'Quarterly revenue figures, not for circulation.\n' > "$t/revenue.txt"
printf 'Board minutes of 4 March 2024.\n' > "$t/minutes.txt"
touch -d 2024-03-04T00:00:00Z "$t/revenue.txt" "$t/minutes.txt"
rm -f constructed-zipcrypto.zip constructed-winzip-aes.zip
(cd "$t" && zip -q -X -P lossprobe zipcrypto.zip revenue.txt minutes.txt && 7z a -bd -tzip -mem=AES256 -plossprobe aes.zip revenue.txt minutes.txt >/dev/null)
mv "$t/zipcrypto.zip" constructed-zipcrypto.zip
mv "$t/aes.zip" constructed-winzip-aes.zip
rm -rf "$t"
