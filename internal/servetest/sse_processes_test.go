package servetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/driver/postgres"
	"github.com/leasehold/leasehold/internal/testdb"
	"github.com/leasehold/leasehold/remote"
)

// stream opens an SSE stream of url, resuming after last when set; it
// returns the events' (id, data) as they arrive and the disconnect.
func stream(t *testing.T, url, token, last string) (<-chan [2]string, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a bound, not a timing guess
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ch := make(chan [2]string, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var ev [2]string
		for sc.Scan() {
			switch l := sc.Text(); {
			case l == "" && ev[0] != "":
				ch <- ev
				ev = [2]string{}
			case strings.HasPrefix(l, "id: "):
				ev[0] = strings.TrimPrefix(l, "id: ")
			case strings.HasPrefix(l, "data: "):
				ev[1] = strings.TrimPrefix(l, "data: ")
			}
		}
	}()
	return ch, cancel
}

// take reads n event ids off ch.
func take(t *testing.T, ch <-chan [2]string, n int) (ids []string) {
	for range n {
		ev, ok := <-ch
		require.True(t, ok, "the stream ended early")
		ids = append(ids, ev[0])
	}
	return ids
}

// TestSSEAcrossTwoServeProcesses (must-show 4, across processes): two
// `leasehold serve` processes on one Postgres schema. Events are written
// through the first; the second streams them, is disconnected mid-stream,
// resumes with Last-Event-ID and sees the rest — no gap, no duplicate —
// then follows new ones. The same for a world's journal, written by this
// test process's own driver.
func TestSSEAcrossTwoServeProcesses(t *testing.T) {
	t.Parallel()
	url, schema := testdb.Schema(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	db := url + sep + "search_path=" + schema
	a := Start(t, "--db", db)
	b := Start(t, "--db", db)
	token := a.Token // minted by the first start; the second found it live
	require.NotEmpty(t, token)
	require.Empty(t, b.Token)
	ctx := context.Background()
	writer := remote.New(a.URL, remote.WithToken(token))

	_, err := writer.Enqueue(ctx, remote.Enqueue{Queue: "q"})
	require.NoError(t, err)
	ls, err := writer.Claim(ctx, "q", "w", 1, 0)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	l := ls[0]
	emit := func(from, to int64) {
		for s := from; s <= to; s++ {
			require.NoError(t, writer.Emit(ctx, l.ID, l.Fence, remote.Event{Seq: s, Kind: "step", Payload: json.RawMessage(fmt.Sprint(s))}))
		}
	}
	ids := func(from, to int64) (out []string) {
		for s := from; s <= to; s++ {
			out = append(out, fmt.Sprintf("%d:%d", l.Fence, s))
		}
		return out
	}
	emit(1, 5)
	path := fmt.Sprintf("%s/v1/runs/%d/events/stream", b.URL, l.ID)
	s1, cut := stream(t, path, token, "")
	require.Equal(t, ids(1, 3), take(t, s1, 3))
	cut()
	emit(6, 9)
	s2, _ := stream(t, path, token, ids(3, 3)[0])
	require.Equal(t, ids(4, 9), take(t, s2, 6))
	emit(10, 10)
	require.Equal(t, ids(10, 10), take(t, s2, 1))

	d, err := postgres.Open(ctx, postgres.Config{URL: url, Schema: schema, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	c, err := leasehold.NewClient(ctx, d, leasehold.Config{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CreateWorld(ctx, "w1", "home")
	require.NoError(t, err)
	renew := func(n int) {
		for range n {
			_, err := c.Renew(ctx, "w1", "home", 1)
			require.NoError(t, err)
		}
	}
	renew(3)
	jpath := b.URL + "/v1/worlds/w1/journal/stream"
	j1, jcut := stream(t, jpath, token, "")
	require.Equal(t, []string{"1", "2", "3"}, take(t, j1, 3))
	jcut()
	renew(2)
	j2, _ := stream(t, jpath, token, "3")
	require.Equal(t, []string{"4", "5", "6"}, take(t, j2, 3))
	renew(1)
	require.Equal(t, []string{"7"}, take(t, j2, 1))

	a.Stop(t)
	b.Stop(t)
}
