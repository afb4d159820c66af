package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestServeCutsOffAHandlerPastTheBound: a request still being answered
// when the shutdown bound runs out (here: its client sent half a body and
// stalled) is cut off, and Serve still closes the client and says so —
// shutdown is bounded whatever a client does.
func TestServeCutsOffAHandlerPastTheBound(t *testing.T) {
	t.Parallel()
	c, err := leasehold.NewClient(t.Context(), stores[0].open(t), leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	s, err := server.New(c, server.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	secret, _, err := c.CreateToken(t.Context(), "t", []string{"admin"})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	type result struct {
		rep server.ShutdownReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := s.Serve(ctx, ln, 200*time.Millisecond)
		done <- result{rep, err}
	}()

	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"runs\":", secret)
	require.NoError(t, err)
	for i := 0; s.InFlight() == 0; i++ { // the handler is reading the body it will never get
		require.Less(t, i, 100_000, "the request never reached a handler")
		runtime.Gosched()
	}

	stop()
	res := <-done
	require.NoError(t, res.err)
	require.True(t, res.rep.CutOff)
	require.Equal(t, int64(1), res.rep.InFlight)
	require.NoError(t, res.rep.ClientCloseErr)
	require.Contains(t, res.rep.String(), "cut off at the timeout")
	require.Less(t, res.rep.Took, 10*time.Second, "bounded")
}
