package programs

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/lease"
)

// KV is a key-value store. Commands (JSON):
//
//	{"op":"put","key":"k","value":<json>}
//	{"op":"get","key":"k"}
//	{"op":"delete","key":"k"}
//	{"op":"cas","key":"k","expect":<json or absent>,"value":<json>}
//
// Replies: {"ok":true,"value":…,"found":…}; a cas whose expectation does
// not hold answers {"ok":false,"value":<current>} and journals nothing but
// its reply.
type KV struct{}

// Name is "kv".
func (KV) Name() string { return "kv" }

// New returns an empty store.
func (KV) New() host.State { return &KVState{Values: map[string]json.RawMessage{}} }

// KVState is the store's contents.
type KVState struct {
	Values map[string]json.RawMessage
}

type kvCmd struct {
	Op     string          `json:"op"`
	Key    string          `json:"key"`
	Value  json.RawMessage `json:"value,omitempty"`
	Expect json.RawMessage `json:"expect,omitempty"`
}

type kvEvent struct {
	Key   string          `json:"k"`
	Value json.RawMessage `json:"v,omitempty"`
}

// KVReply is a KV command's reply.
type KVReply struct {
	OK    bool            `json:"ok"`
	Found bool            `json:"found"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Decide decides a KV command.
func (s *KVState) Decide(cmd host.Command) (host.Decision, error) {
	var c kvCmd
	if err := strictJSON(cmd.Payload, &c); err != nil {
		return host.Decision{}, fmt.Errorf("kv: %v: %w", err, lease.ErrInvalid)
	}
	if c.Key == "" || len(c.Key) > 1024 {
		return host.Decision{}, fmt.Errorf("kv: a key of 1 to 1024 bytes is required: %w", lease.ErrInvalid)
	}
	cur, found := s.Values[c.Key]
	switch c.Op {
	case "get":
		return reply(KVReply{OK: true, Found: found, Value: cur}, nil)
	case "put", "cas":
		if len(c.Value) == 0 || bytes.Equal(c.Value, []byte("null")) {
			return host.Decision{}, fmt.Errorf("kv: %s needs a value (delete removes a key): %w", c.Op, lease.ErrInvalid)
		}
		if c.Op == "cas" {
			holds := (len(c.Expect) == 0 && !found) || (len(c.Expect) > 0 && found && bytes.Equal(compact(c.Expect), cur))
			if !holds {
				return reply(KVReply{Found: found, Value: cur}, nil)
			}
		}
		v := compact(c.Value)
		return reply(KVReply{OK: true, Found: true, Value: v}, []host.Event{event("put", kvEvent{c.Key, v})})
	case "delete":
		if !found {
			return reply(KVReply{OK: true}, nil)
		}
		return reply(KVReply{OK: true}, []host.Event{event("deleted", kvEvent{Key: c.Key})})
	}
	return host.Decision{}, fmt.Errorf("kv: unknown op %q (put, get, delete, cas): %w", c.Op, lease.ErrInvalid)
}

// Apply folds a put or deleted event.
func (s *KVState) Apply(ev host.Event) error {
	var e kvEvent
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("kv event %s: %v", ev.Kind, err)
	}
	switch ev.Kind {
	case "put":
		s.Values[e.Key] = e.Value
	case "deleted":
		delete(s.Values, e.Key)
	default:
		return fmt.Errorf("kv: unknown event %q", ev.Kind)
	}
	return nil
}
