package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// StreamedEvent is one event of a run's or a queue's event stream, with
// its stream id ("<fence>:<seq>" for a run's, "<pos>:<run>:<fence>:<seq>"
// for a queue's) and its run (a queue stream's only; 0 on a run's).
type StreamedEvent struct {
	ID    string
	RunID int64 `json:"run_id"`
	StoredEvent
}

// StreamEvents follows a run's events (GET /v1/runs/{id}/events/stream)
// from after the stream id after ("" for the start) until ctx ends, when
// the channel is closed. When the connection drops it reconnects with
// Last-Event-ID set to the last event received, so the channel carries
// every durable event once, in order, across reconnects. An error the
// server answers (the run does not exist, a bad id) ends the stream; it
// is returned by the first call when it happens at once.
func (c *Client) StreamEvents(ctx context.Context, id int64, after string) (<-chan StreamedEvent, error) {
	return c.follow(ctx, runPath(id, "/events/stream"), after)
}

// StreamQueueEvents follows every run event of a queue, in commit order
// (GET /v1/queues/{queue}/events/stream), as StreamEvents follows a
// run's: from after the stream id after ("" for the start), reconnecting
// with Last-Event-ID, each event once, until ctx ends. The token needs
// read on the queue.
func (c *Client) StreamQueueEvents(ctx context.Context, queue, after string) (<-chan StreamedEvent, error) {
	return c.follow(ctx, "/v1/queues/"+url.PathEscape(queue)+"/events/stream", after)
}

// follow opens the event stream at path and keeps it open across dropped
// connections (StreamEvents).
func (c *Client) follow(ctx context.Context, path, after string) (<-chan StreamedEvent, error) {
	resp, err := c.openStream(ctx, path, after)
	if err != nil {
		return nil, err
	}
	out := make(chan StreamedEvent, 64)
	go func() {
		defer close(out)
		last := after
		backoff := 10 * time.Millisecond
		for {
			last = readEvents(ctx, resp.Body, last, out)
			resp.Body.Close()
			for {
				t := time.NewTimer(backoff)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
				if resp, err = c.openStream(ctx, path, last); err == nil {
					backoff = 10 * time.Millisecond
					break
				}
				if _, isProblem := AsProblem(err); isProblem || ctx.Err() != nil {
					return
				}
				backoff = min(2*backoff, 2*time.Second)
			}
		}
	}()
	return out, nil
}

// openStream GETs an event stream, resuming after last.
func (c *Client) openStream(ctx context.Context, path, last string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("remote: GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		p := &Problem{}
		if json.Unmarshal(raw, p) != nil || p.Type == "" {
			return nil, fmt.Errorf("remote: GET %s: status %d: %.200s", path, resp.StatusCode, raw)
		}
		return nil, p
	}
	return resp, nil
}

// readEvents parses server-sent events off body onto out until it ends;
// it returns the id of the last event delivered.
func readEvents(ctx context.Context, body io.Reader, last string, out chan<- StreamedEvent) string {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var id, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if id != "" {
				var e StreamedEvent
				if json.Unmarshal([]byte(data), &e) == nil {
					e.ID = id
					select {
					case out <- e:
						last = id
					case <-ctx.Done():
						return last
					}
				}
			}
			id, data = "", ""
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
	return last
}
