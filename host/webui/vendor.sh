#!/usr/bin/env bash
# Re-creates the vendored front-end modules in assets/ from the npm registry
# (`make webui-vendor`). The versions and the tarballs' integrity are pinned
# in vendor.lock; a tarball whose integrity differs is refused. Preact's hooks
# import the bare specifier "preact", which a browser cannot resolve without
# an import map (an inline script, which the UI's CSP forbids), so it is
# rewritten to the file next to it. pdf.js (its modern build: the UI targets
# current Chromium, Firefox and Safari) and its worker are copied as they are;
# the preview imports them only when a PDF is opened.
set -euo pipefail
cd "$(dirname "$0")"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
while read -r name version integrity; do
  [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
  (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
  tgz="$tmp/$name-$version.tgz"
  got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  if [ "$got" != "$integrity" ]; then
    echo "vendor: $name@$version integrity $got, lock says $integrity" >&2; exit 1
  fi
  mkdir -p "$tmp/$name" && tar xzf "$tgz" -C "$tmp/$name"
done < vendor.lock
p="$tmp/preact/package"
cp "$p/dist/preact.mjs" assets/preact.mjs
sed 's/from"preact"/from".\/preact.mjs"/g' "$p/hooks/dist/hooks.mjs" > assets/preact-hooks.mjs
cp "$tmp/htm/package/dist/htm.mjs" assets/htm.mjs
cp "$p/LICENSE" assets/LICENSE-preact.txt
cp "$tmp/htm/package/LICENSE" assets/LICENSE-htm.txt
q="$tmp/pdfjs-dist/package"
cp "$q/build/pdf.min.mjs" assets/pdf.min.mjs
cp "$q/build/pdf.worker.min.mjs" assets/pdf.worker.min.mjs
cp "$q/LICENSE" assets/LICENSE-pdfjs.txt
echo "vendor: assets/preact.mjs preact-hooks.mjs htm.mjs pdf.min.mjs pdf.worker.min.mjs written"
