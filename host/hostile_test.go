package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold/driver"
	"github.com/leasehold/leasehold/host"
	"github.com/leasehold/leasehold/host/programs"
	"github.com/leasehold/leasehold/internal/hostile"
	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// hostSentinels are the exported sentinels a refused command may match
// (the root package re-exports each).
var hostSentinels = []error{lease.ErrInvalid, lease.ErrNotFound, lease.ErrKeyReused,
	lease.ErrOverloaded, lease.ErrUnavailable, lease.ErrNotHolder, lease.ErrFenced}

// sentinelOf names the first sentinel err matches, or "untyped".
func sentinelOf(err error) string {
	for _, s := range hostSentinels {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return "untyped"
}

// rawJSONString quotes s as a JSON string the way a careless client in
// another language would: quote, backslash and C0 escaped, every other
// byte sent as it is (invalid UTF-8 included).
func rawJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestHostileCorpusThroughTheHost drives internal/hostile's corpus into the
// world host's entry points on both stores — a command's key and its
// payload through Host.Submit in process and through Remote.Submit over the
// HTTP API, the key also in a raw HTTP body as a client in another
// language would send it (escaped surrogates and invalid UTF-8 included),
// and the world id — and requires of every call: a refusal that matches
// one exported sentinel and journals nothing, or an acceptance whose key
// reads back byte-identical on its host.turn entry, whose value reads back
// as sent (compacted), and which a retry answers as a duplicate without a
// second entry. The in-process and remote answers must agree value for
// value.
func TestHostileCorpusThroughTheHost(t *testing.T) {
	forEachDriver(t, func(t *testing.T, d driver.Driver) {
		ctx := context.Background()
		h := newHost(t, d, "home-1", programs.KV{})
		srv := httptest.NewServer(host.Handler(h))
		t.Cleanup(srv.Close)
		remote := host.NewRemote(h.Node(), srv.URL, srv.Client())
		require.NoError(t, h.Create(ctx, "w"))

		// head counts the world's entries but its holder's renewals: the
		// host journals a lease.renewed whenever its term asks, between
		// any two calls (a loaded box saw one inside a call's window).
		head := func() int64 {
			var n int64
			for _, e := range journalOf(t, d, "w") {
				if e.Kind != journal.KindRenewed {
					n++
				}
			}
			return n
		}
		type submitter struct {
			name   string
			submit func(world string, cmd host.Command) (host.Reply, error)
		}
		rawHTTP := func(world string, cmd host.Command) (host.Reply, error) {
			body := `{"key":` + cmd.Key + `,"payload":` + string(cmd.Payload) + `}` // cmd.Key is the key's JSON text
			resp, err := srv.Client().Post(srv.URL+"/v1/worlds/"+world+"/commands", "application/json", bytes.NewBufferString(body))
			require.NoError(t, err)
			defer resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				var rb struct {
					Position  int64           `json:"position"`
					Payload   json.RawMessage `json:"payload"`
					Duplicate bool            `json:"duplicate"`
				}
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&rb))
				return host.Reply{Position: rb.Position, Payload: rb.Payload, Duplicate: rb.Duplicate}, nil
			}
			var p host.Problem
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&p))
			if p.Type == host.ProblemInvalid || p.Type == host.ProblemCommand {
				return host.Reply{}, fmt.Errorf("%s: %w", p.Detail, lease.ErrInvalid)
			}
			return host.Reply{}, &p
		}
		local := submitter{"local", func(w string, c host.Command) (host.Reply, error) { return h.Submit(ctx, w, c) }}
		remoteS := submitter{"remote", func(w string, c host.Command) (host.Reply, error) { return remote.Submit(ctx, w, c) }}
		raw := submitter{"raw-http", rawHTTP}

		strs := append(hostile.Strings(),
			hostile.String{Name: "escaped-lone-high-surrogate", Value: `\ud800`}, // sent raw, the escape is the JSON text
			hostile.String{Name: "escaped-lone-low-surrogate", Value: `\udc00`},
			hostile.String{Name: "escaped-pair", Value: `\ud83d\ude42`})
		var calls, accepted, refused, untyped, changed, roundTrip int
		outcomes := map[string]string{} // entry point + value → outcome, per submitter kind
		record := func(ep, value, who, outcome string) {
			k := ep + "/" + value
			if prev, ok := outcomes[k]; ok && prev != outcome && who != "raw-http" {
				t.Errorf("%s %q: local and remote disagree: %s vs %s", ep, value, prev, outcome)
			}
			outcomes[k] = outcome
		}
		try := func(ep, value string, s submitter, world string, cmd host.Command, check func(host.Reply)) {
			calls++
			before := head()
			rep, err := s.submit(world, cmd)
			if err != nil {
				refused++
				kind := sentinelOf(err)
				if kind == "untyped" {
					untyped++
					t.Errorf("%s via %s, %s: untyped refusal: %v", ep, s.name, value, err)
				}
				if head() != before {
					changed++
					t.Errorf("%s via %s, %s: refused but the journal moved", ep, s.name, value)
				}
				record(ep, value, s.name, "refused:"+kind)
				return
			}
			accepted++
			record(ep, value, s.name, "accepted")
			if head() != before+1 {
				roundTrip++
				t.Errorf("%s via %s, %s: accepted with %d new entries, want 1", ep, s.name, value, head()-before)
			}
			again, err := s.submit(world, cmd)
			if err != nil || !again.Duplicate || again.Position != rep.Position || head() != before+1 {
				roundTrip++
				t.Errorf("%s via %s, %s: the retry was not answered once: %+v %v", ep, s.name, value, again, err)
			}
			check(rep)
		}

		for i, v := range strs {
			for _, s := range []submitter{local, remoteS, raw} {
				// A command key; each submitter gets its own key (a key
				// is applied once per world, whoever sends it).
				key, want := v.Value, v.Value // a prefix per submitter, the hostile part kept whole
				if key != "" {
					key = s.name + ":" + key
					want = key
				}
				if s.name == "raw-http" {
					// The key as JSON text; an escaped-* value is the
					// client's own escape, sent as written.
					key = rawJSONString(want)
					if strings.HasPrefix(v.Name, "escaped-") {
						key = `"` + want + `"`
					}
					want = "" // what it means, if anything: JSON's reading of it
					_ = json.Unmarshal([]byte(key), &want)
				}
				// A key Go's JSON decoder would repair (invalid UTF-8, an
				// unpaired surrogate escape, both read as U+FFFD) is not
				// the key the client sent: it must be refused.
				repaired := s.name == "raw-http" && (!utf8.ValidString(key) || strings.Contains(v.Name, "lone"))
				cmd := host.Command{Key: key, Payload: json.RawMessage(fmt.Sprintf(`{"op":"put","key":"k%d","value":%d}`, i, i))}
				try("command.key", v.Name, s, "w", cmd, func(rep host.Reply) {
					if repaired {
						roundTrip++
						t.Errorf("command.key via raw HTTP, %s: accepted a key JSON decoding repaired (journaled as %q)", v.Name, want)
					}
					es := journalOf(t, d, "w")
					e := es[rep.Position-1]
					if e.Kind != host.TurnKind || e.Key != want {
						roundTrip++
						t.Errorf("command.key via %s, %s: journaled %q under %q, want the key %q", s.name, v.Name, e.Kind, e.Key, want)
					}
				})
				if s.name == "raw-http" {
					continue
				}
				// A world id: never a world here but "w".
				calls++
				before := head()
				_, err := s.submit(v.Value, host.Command{Key: fmt.Sprintf("world-%s-%d", s.name, i), Payload: json.RawMessage(`{"op":"get","key":"k"}`)})
				if v.Value == "w" {
					continue
				}
				require.Error(t, err, "world %q", v.Value)
				refused++
				if sentinelOf(err) == "untyped" {
					untyped++
					t.Errorf("world id via %s, %s: untyped refusal: %v", s.name, v.Name, err)
				}
				if head() != before {
					changed++
				}
				record("world", v.Name, s.name, "refused:"+sentinelOf(err))
			}
		}
		for i, p := range hostile.Payloads() {
			for _, s := range []submitter{local, remoteS} {
				k := fmt.Sprintf("v-%s-%d", s.name, i)
				cmd := host.Command{Key: "put-" + k, Payload: json.RawMessage(`{"op":"put","key":"` + k + `","value":` + string(p.Value) + `}`)}
				try("command.payload.value", p.Name, s, "w", cmd, func(rep host.Reply) {
					got, err := s.submit("w", host.Command{Key: "get-" + k, Payload: json.RawMessage(`{"op":"get","key":"` + k + `"}`)})
					require.NoError(t, err)
					var put, read programs.KVReply
					require.NoError(t, json.Unmarshal(rep.Payload, &put))
					require.NoError(t, json.Unmarshal(got.Payload, &read))
					var want bytes.Buffer
					require.NoError(t, json.Compact(&want, p.Value))
					if !read.Found || !bytes.Equal(read.Value, want.Bytes()) || !bytes.Equal(put.Value, want.Bytes()) {
						roundTrip++
						t.Errorf("value via %s, %s: read back %q (put answered %q), want %q", s.name, p.Name, read.Value, put.Value, want.Bytes())
					}
				})
			}
		}
		auditOK(t, journalOf(t, d, "w"))
		t.Logf("hostile host %s: %d strings, %d payloads; %d calls (%d accepted, %d refused), untyped=%d changes-on-refusal=%d roundtrip-failures=%d",
			d.Name(), len(strs), len(hostile.Payloads()), calls, accepted, refused, untyped, changed, roundTrip)
		require.Zero(t, untyped+changed+roundTrip)
	})
}
