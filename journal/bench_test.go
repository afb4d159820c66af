package journal

import (
	"crypto/ed25519"
	"fmt"
	"testing"
	"time"
)

// BenchmarkSignedBatch: one 512-entry batch of turn-sized payloads on its
// way from the holder to the planner, reported per entry — what every
// command pays in this package whichever store takes it: the holder's
// normalization and signature, the driver's validation (ValidateAppend
// per request, ValidateSignedBatch), and the planner (PlanAppendKeyed:
// validation again, the signature's check, the hash chain and the fold).
// One goroutine, no store: ns/entry is CPU, and allocs/entry and
// B/entry are the figures a loaded machine does not bend.
func BenchmarkSignedBatch(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	p, err := PlanCreate("w", "n1", 30*time.Second, t0)
	if err != nil {
		b.Fatal(err)
	}
	if err := BindKeys(&p, func(string) ([]byte, error) { return pub, nil }); err != nil {
		b.Fatal(err)
	}
	s := p.After
	const n = 512
	payloads, keys := make([][]byte, n), make([]string, n)
	for i := range payloads {
		keys[i] = fmt.Sprint("k", i)
		payloads[i] = fmt.Appendf(nil, `{"p":"bank","h":"Xq3kV9-c2pYQm4oT7bL0sJ1uW8eR5aN6dG_hZfK3yE0","e":[{"k":"deposited","d":{"a":"a%d","n":1}}],"r":{"ok":true,"balance":%d}}`, i%8, 1000+i)
	}
	now := t0.Add(time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		// The holder: its requests, normalized and signed.
		reqs := make([]AppendRequest, n)
		es := make([]Entry, n)
		for i := range reqs {
			pl, err := NormalizePayload(payloads[i])
			if err != nil {
				b.Fatal(err)
			}
			reqs[i] = AppendRequest{Holder: "n1", Epoch: 1, SeenPosition: 1, Kind: "host.turn", Key: keys[i],
				Payload: pl, Position: s.Position + 1 + int64(i)}
			es[i] = Entry{World: "w", Position: reqs[i].Position, Epoch: 1, Kind: "host.turn", Holder: "n1", Key: reqs[i].Key, Payload: pl}
		}
		reqs[n-1].Signature = SignBatch(priv, es)
		// The driver's validation.
		valid := make([]AppendRequest, n)
		for i := range reqs {
			valid[i] = reqs[i]
			if err := ValidateAppend(&valid[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := ValidateSignedBatch(valid); err != nil {
			b.Fatal(err)
		}
		// The planner.
		_, out := PlanAppendKeyed(s, now, valid, func(string) bool { return false }, nil)
		if out[n-1].Err != nil {
			b.Fatal(out[n-1].Err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
	b.ReportMetric(0, "ns/op")
}
