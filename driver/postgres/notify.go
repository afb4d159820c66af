package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/leasehold/leasehold/driver"
)

var _ driver.EventNotifier = (*store)(nil)

// eventsChannelBase is the NOTIFY channel of run events; a driver with
// Config.Schema set uses eventsChannelBase_<schema>, so stores sharing a
// database in different schemas do not wake one another.
const eventsChannelBase = "leasehold_run_events"

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
	ch := eventsChannelBase + "_" + d.cfg.Schema
	if len(ch) > maxChannelLen {
		sum := sha256.Sum256([]byte(d.cfg.Schema))
		ch = eventsChannelBase + "_" + hex.EncodeToString(sum[:16])
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
	d.lmu.Lock()
	if d.closed {
		d.lmu.Unlock()
		return nil, errors.New("postgres: listening for run events: the driver is closed")
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
	channel := d.eventsChannel()
	conn, err := d.listen(lctx, channel)
	if err != nil {
		done()
		return nil, fmt.Errorf("postgres: listening for run events: %w", withCtx(ctx, err))
	}
	out := make(chan int64, 1024)
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
				if conn, err = d.listen(lctx, channel); err != nil {
					if lctx.Err() != nil {
						return
					}
					d.log.Warn("postgres: run event listener cannot reconnect; retrying", "err", err, "backoff", backoff)
					backoff = min(backoff*2, listenBackoffMax)
					continue
				}
				backoff = listenBackoffMin
				select { // events may have committed while we were away
				case out <- 0:
				default:
				}
			}
			n, err := conn.WaitForNotification(lctx)
			if err != nil {
				closeListenConn(conn)
				conn = nil
				if lctx.Err() != nil {
					return
				}
				d.log.Warn("postgres: run event listener lost its connection; reconnecting", "err", err)
				continue
			}
			for f := range strings.SplitSeq(n.Payload, ",") {
				id, err := strconv.ParseInt(f, 10, 64)
				if err != nil || id <= 0 {
					continue
				}
				select {
				case out <- id:
				default: // the consumer is slow: best effort
				}
			}
		}
	}()
	return out, nil
}

// listen opens a dedicated connection listening on channel.
func (d *store) listen(ctx context.Context, channel string) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, d.listenCfg.Copy())
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
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
