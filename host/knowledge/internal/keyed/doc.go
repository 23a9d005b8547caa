// Package keyed holds the knowledge packages' mutex per key: one
// content's pages are extracted, or read by OCR, by one caller at a time.
package keyed
