package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
)

var (
	_ driver.EventNotifier   = (*store)(nil)
	_ driver.JournalNotifier = (*store)(nil)
)

// eventsChannelBase is the NOTIFY channel of run events; a driver with
// Config.Schema set uses eventsChannelBase_<schema>, so stores sharing a
// database in different schemas do not wake one another.
const eventsChannelBase = "leasehold_run_events"

// journalChannelBase is the NOTIFY channel of journal entries. The
// trigger of migration 0013 notifies journalChannelBase_<schema> (hashed
// like eventsChannel when too long) with the world id as payload; the
// schema is always named, since a trigger knows its table's schema but not
// the connection's settings. The one-statement appends notify the same
// channel themselves, naming current_schema() — where their tables are
// found — and the trigger steps aside for them (migration 0026).
const journalChannelBase = "leasehold_journal"

// maxChannelLen is the longest channel name Postgres accepts
// (NAMEDATALEN - 1 bytes).
const maxChannelLen = 63

// Listener reconnect backoff bounds.
const (
	listenBackoffMin = 10 * time.Millisecond
	listenBackoffMax = 5 * time.Second
)

// eventsChannel is the NOTIFY channel of this driver's schema. A name that
// would be too long uses a hash of the schema instead.
func (d *store) eventsChannel() string {
	if d.cfg.Schema == "" {
		return eventsChannelBase
	}
	return schemaChannel(eventsChannelBase, d.cfg.Schema)
}

// schemaChannel is base_<schema>, or base_<hash of schema> when that is
// longer than Postgres accepts. Migration 0013's trigger
// computes the same name in SQL.
func schemaChannel(base, schema string) string {
	ch := base + "_" + schema
	if len(ch) > maxChannelLen {
		sum := sha256.Sum256([]byte(schema))
		ch = base + "_" + hex.EncodeToString(sum[:16])
	}
	return ch
}

// RunEventsNotify implements driver.EventNotifier with LISTEN on a
// dedicated connection (pgx.Connect with the pools' session settings; not
// a pooled connection, which it would hold forever). It returns once the
// connection listens, so every commit after the return is seen, and sends
// the run ids of each notification RunEventAppend issues at commit,
// without blocking: ids the consumer is not ready for are dropped (the
// channel buffers some). When the connection fails it reconnects with
// backoff until ctx ends or the driver is closed; after a reconnect it
// sends 0 (never a run id), meaning events of any run may have been
// missed meanwhile. The channel is closed when ctx ends or at Close.
func (d *store) RunEventsNotify(ctx context.Context) (<-chan int64, error) {
	channel := func(context.Context, *pgx.Conn) (string, error) { return d.eventsChannel(), nil }
	return listenFor(d, ctx, "run events", channel, 0, func(payload string, send func(int64)) {
		for f := range strings.SplitSeq(payload, ",") {
			if id, err := strconv.ParseInt(f, 10, 64); err == nil && id > 0 {
				send(id)
			}
		}
	})
}

// JournalNotify implements driver.JournalNotifier like RunEventsNotify:
// it sends the world id of each notification the journal_entries trigger
// issues at commit (every write path that inserts entries: appends, lease
// changes, the sweep, imports), and "" after a reconnect.
func (d *store) JournalNotify(ctx context.Context) (<-chan string, error) {
	channel := func(ctx context.Context, conn *pgx.Conn) (string, error) {
		schema := d.cfg.Schema
		if schema == "" { // the connection's own: where its tables are found
			if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
				return "", err
			}
		}
		return schemaChannel(journalChannelBase, schema), nil
	}
	return listenFor(d, ctx, "journal entries", channel, "", func(payload string, send func(string)) {
		if payload != "" {
			send(payload)
		}
	})
}

// listenFor is the one LISTEN loop: a dedicated connection listening on
// the channel channelOf names, each notification's payload parsed into
// values sent without blocking, missed (a value meaning "anything may have
// been missed") sent after every reconnect.
func listenFor[T any](d *store, ctx context.Context, what string, channelOf func(context.Context, *pgx.Conn) (string, error),
	missed T, parse func(payload string, send func(T))) (<-chan T, error) {
	d.lmu.Lock()
	if d.closed {
		d.lmu.Unlock()
		return nil, fmt.Errorf("postgres: listening for %s: the driver is closed", what)
	}
	d.listeners.Add(1)
	d.lmu.Unlock()
	lctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(d.closing, cancel)
	done := func() {
		stop()
		cancel()
		d.listeners.Done()
	}
	conn, err := d.listen(lctx, channelOf)
	if err != nil {
		done()
		return nil, fmt.Errorf("postgres: listening for %s: %w", what, withCtx(ctx, err))
	}
	out := make(chan T, 1024)
	send := func(v T) {
		select {
		case out <- v:
		default: // the consumer is slow: best effort
		}
	}
	go func() {
		defer done()
		defer close(out)
		backoff := listenBackoffMin
		for {
			if conn == nil {
				t := time.NewTimer(backoff)
				select {
				case <-lctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				if conn, err = d.listen(lctx, channelOf); err != nil {
					if lctx.Err() != nil {
						return
					}
					d.log.Warn("postgres: listener cannot reconnect; retrying", "what", what, "err", err, "backoff", backoff)
					backoff = min(backoff*2, listenBackoffMax)
					continue
				}
				backoff = listenBackoffMin
				send(missed) // notifications may have been sent while we were away
			}
			n, err := conn.WaitForNotification(lctx)
			if err != nil {
				closeListenConn(conn)
				conn = nil
				if lctx.Err() != nil {
					return
				}
				d.log.Warn("postgres: listener lost its connection; reconnecting", "what", what, "err", err)
				continue
			}
			parse(n.Payload, send)
		}
	}()
	return out, nil
}

// listen opens a dedicated connection listening on the channel channelOf
// names for it.
func (d *store) listen(ctx context.Context, channelOf func(context.Context, *pgx.Conn) (string, error)) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, d.listenCfg.Copy())
	if err != nil {
		return nil, err
	}
	channel, err := channelOf(ctx, conn)
	if err == nil {
		_, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize())
	}
	if err != nil {
		closeListenConn(conn)
		return nil, err
	}
	return conn, nil
}

// closeListenConn closes a listener connection, waiting briefly for the
// server to hear of it.
func closeListenConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}
