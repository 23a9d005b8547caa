#!/bin/sh
# Builds the image files of this folder from corpus pages with real tools:
#   fax-camlidl-2pages.tif: pages 1 and 2 of ../pdf/deb-camlidl-1.04.pdf
#     rendered 1-bit at 100 dpi by poppler (pdftoppm -mono), each encoded
#     CCITT Group 4 by libtiff 4.5 (ppm2tiff -c g4 -R 100), joined into one
#     two-page TIFF by tiffcp, as a fax server stores a fax.
# Run from this folder: sh make-images.sh (needs poppler-utils, libtiff-tools).
set -e
t=$(mktemp -d)
pdftoppm -mono -r 100 -f 1 -l 2 ../pdf/deb-camlidl-1.04.pdf "$t/p"
for p in "$t"/p-*.pbm; do ppm2tiff -c g4 -R 100 "$p" "${p%.pbm}.tif"; done
tiffcp -c g4 "$t"/p-01.tif "$t"/p-02.tif fax-camlidl-2pages.tif
rm -rf "$t"
