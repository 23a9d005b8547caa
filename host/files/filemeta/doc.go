// Package filemeta holds the records of the file service: files (Item),
// folders, versions, edit proposals, listing filters and pages. They are
// plain values, so the SQL store (host/store) can keep them without
// importing the file service above it (host/files), which declares the
// Store it needs from the database.
package filemeta
