#!/bin/sh
# Builds the encrypted mails of this folder with real tools: OpenSSL's
# S/MIME (openssl smime -encrypt, a throw-away self-signed certificate
# made here and not kept) and GnuPG (gpg --symmetric --armor, a
# passphrase used once and not kept); the rest are written by
# make-lossprobe.py with Python 3's email and binascii modules.
# Run from this folder: sh make-lossprobe.sh
set -e
t=$(mktemp -d)
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$t/key.pem" -out "$t/cert.pem" -days 3650 \
	-subj "/CN=Bob Recipient/emailAddress=bob@example.org" 2>/dev/null
printf 'Content-Type: text/plain; charset=utf-8\r\n\r\nThe merger with Northwind closes on 12 May; keep it quiet.\r\n' |
	openssl smime -encrypt -aes256 -from "Alice Sender <alice@example.org>" -to "bob@example.org" \
		-subject "Confidential: merger date" "$t/cert.pem" > smime-enveloped.eml
printf 'The merger with Northwind closes on 12 May; keep it quiet.\n' |
	gpg --batch --homedir "$t" --passphrase lossprobe --pinentry-mode loopback --symmetric --armor > "$t/msg.asc"
python3 make-lossprobe.py "$t/msg.asc"
rm -rf "$t"
