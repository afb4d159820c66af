package host

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// Peer is a host a Router can submit to and move worlds between: a *Host
// in this process, or a *Remote host reached over its HTTP API.
type Peer interface {
	Node() string
	Submit(ctx context.Context, world string, cmd Command) (Reply, error)
	Prepare(ctx context.Context, world string) error
	Acquire(ctx context.Context, world string) error
	Handoff(ctx context.Context, world, to string) error
}

var (
	_ Peer = (*Host)(nil)
	_ Peer = (*Remote)(nil)
)

// Remote is a host in another process, reached over its HTTP API
// (Handler). Its methods answer the same typed errors a *Host does,
// rebuilt from the problem documents. A transport failure on a command is
// an *UnknownOutcomeError (the command may have been applied; retry with
// the same key); on the other calls it matches lease.ErrUnavailable.
type Remote struct {
	node   string
	base   string
	client *http.Client
}

// NewRemote returns the host named node at base (e.g.
// "http://127.0.0.1:7461"); client nil means http.DefaultClient.
func NewRemote(node, base string, client *http.Client) *Remote {
	if client == nil {
		client = http.DefaultClient
	}
	return &Remote{node: node, base: base, client: client}
}

// Node is the remote host's node name.
func (r *Remote) Node() string { return r.node }

func (r *Remote) post(ctx context.Context, world, op string, body any, out any) error {
	// The world id is checked here as the host checks it, so a bad one is
	// refused alike (an empty one would not even reach the right route).
	if err := journal.ValidateID("world", world); err != nil {
		return err
	}
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			return err
		}
	}
	u := r.base + "/v1/worlds/" + pathSegment(world) + "/" + op
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, &buf)
	if err != nil {
		return fmt.Errorf("host %s: %v: %w", r.node, err, lease.ErrInvalid)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("host %s: %s %s: %w: %w", r.node, op, world, err, lease.ErrUnavailable)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRequestBytes))
	if err != nil {
		return fmt.Errorf("host %s: reading the answer to %s %s: %w: %w", r.node, op, world, err, lease.ErrUnavailable)
	}
	if resp.StatusCode >= 300 {
		var p Problem
		if json.Unmarshal(data, &p) != nil || p.Type == "" {
			return fmt.Errorf("host %s: %s %s: HTTP %d: %w", r.node, op, world, resp.StatusCode, lease.ErrUnavailable)
		}
		return errorOf(&p)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("host %s: decoding the answer to %s %s: %w: %w", r.node, op, world, err, lease.ErrUnavailable)
		}
	}
	return nil
}

// Submit sends a command to the remote host.
func (r *Remote) Submit(ctx context.Context, world string, cmd Command) (Reply, error) {
	cmd, err := validCommand(cmd)
	if err != nil {
		return Reply{}, err
	}
	var rb replyBody
	err = r.post(ctx, world, "commands", commandRequest{Key: strictString(cmd.Key), Payload: cmd.Payload}, &rb)
	if err != nil {
		if !isTyped(err) {
			err = &UnknownOutcomeError{World: world, Key: cmd.Key, Err: err}
		}
		return Reply{}, err
	}
	return Reply{Position: rb.Position, Payload: rb.Payload, Duplicate: rb.Duplicate}, nil
}

// isTyped: an answer the remote host gave (as opposed to a transport
// failure, after which a command's outcome is unknown).
func isTyped(err error) bool {
	switch err.(type) {
	case *NotHolderError, *OverloadedError, *KeyReusedError, *UnknownOutcomeError, *CommandError, *ProgramError:
		return true
	}
	return false
}

// Create asks the remote host to create a world homed on it and hold it.
func (r *Remote) Create(ctx context.Context, world string) error {
	return r.post(ctx, world, "create", nil, nil)
}

// Prepare asks the remote host to look at a world and warm its mirror.
func (r *Remote) Prepare(ctx context.Context, world string) error {
	return r.post(ctx, world, "prepare", nil, nil)
}

// Acquire asks the remote host to hold a world the store delivered to it.
func (r *Remote) Acquire(ctx context.Context, world string) error {
	return r.post(ctx, world, "acquire", nil, nil)
}

// Handoff asks the remote host to hand a world to another node.
func (r *Remote) Handoff(ctx context.Context, world, to string) error {
	return r.post(ctx, world, "handoff", handoffRequest{To: strictString(to)}, nil)
}

// pathSegment escapes a world id as one URL path segment. "." and ".."
// are valid ids but would be read as the path's own dot segments (and
// cleaned away), so their dots are percent-encoded too.
func pathSegment(world string) string {
	if world == "." || world == ".." {
		return strings.ReplaceAll(world, ".", "%2E")
	}
	return url.PathEscape(world)
}
