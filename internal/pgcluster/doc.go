// Package pgcluster runs a throwaway PostgreSQL cluster for tests that must
// do to a server what no test may do to the shared one: stop it with
// `pg_ctl stop -m immediate` (the server's own SIGQUIT: no checkpoint, no
// goodbye to clients, WAL replay at the next start — what a power cut
// leaves, short of the OS page cache) and start it again under clients that
// keep running.
//
// A cluster is initdb'd into a fresh temporary folder, listens on its own
// free port on 127.0.0.1 only (and on a unix socket inside its folder), uses
// trust authentication and keeps the durability settings of a production
// server: fsync, synchronous_commit and full_page_writes on. Its URL stays
// the same across Stop and Start, so clients reconnect to it. Close stops it
// and removes the folder.
//
// PostgreSQL refuses to run as root. When the test runs as root, every
// server binary is run as the `postgres` user (runuser -u postgres --) and
// the folder is handed to that user (chown).
//
// The binaries are looked up in $LEASEHOLD_PG_BIN, else in
// /usr/lib/postgresql/15/bin (Debian's layout). Start (the test helper)
// skips the test loudly when they are missing — and fails it with CI=true,
// so CI never passes by skipping.
//
// The shared server on :5432 is never touched: nothing here connects to any
// port but the cluster's own.
//
// This is a test tool, not for production: it trusts every local user and
// tunes nothing.
package pgcluster
