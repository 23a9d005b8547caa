// Package bgjob holds the records of background jobs: a Job, its Status
// and the Update the worker applies. They are plain values, so the SQL
// store (host/store) keeps jobs without importing the background service
// (host/background: the agent runs, the job queue) above it, which declares
// the Store it needs.
package bgjob
