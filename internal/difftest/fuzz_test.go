package difftest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// opBytes is the size of one encoded op: its kind, then its choices (zero
// past what the input holds). A fixed size keeps a mutation of one op from
// shifting every op after it.
const opBytes = 32

// FuzzStoresAgree applies one sequence of operations to SQLite and to
// Postgres, both behind driver.Validating and one fake store clock, and
// fails on the first op whose typed outcome differs — or whose error
// matches no sentinel — and then on the first difference in the read-back
// of the whole state.
//
// One pair of stores serves the whole fuzz worker process; each execution
// starts from empty tables and the clock at drivertest.StartTime.
func FuzzStoresAgree(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	p := openPair(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p.reset(t)
		agree(t, p, data)
	})
}

// agree runs the sequence data decodes to and compares as it goes.
func agree(t *testing.T, p *pair, data []byte) {
	ctx := context.Background()
	lite, pg := newSide(p.lite), newSide(p.pg)
	var done []string // the ops so far, for the failure message
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\n\nthe sequence:\n  %s", fmt.Sprintf(format, args...), strings.Join(done, "\n  "))
	}
	for i := 0; i < maxOps && i*opBytes < len(data); i++ {
		chunk := data[i*opBytes : min(len(data), (i+1)*opBytes)]
		st := decodeOp(ctx, &input{b: chunk}, lite)
		done = append(done, fmt.Sprintf("%2d %s", i, st.desc))
		if st.clock != nil {
			st.clock(p)
			continue
		}
		a, b := st.run(ctx, lite), st.run(ctx, pg)
		if a != b || strings.Contains(a, unmatched) || strings.Contains(b, unmatched) {
			fail("op %d: %s\n  sqlite:   %s\n  postgres: %s", i, st.desc, a, b)
		}
		done[len(done)-1] += "\n       → " + a
	}
	if os.Getenv("DIFFTEST_LOG") != "" { // DIFFTEST_LOG=1 go test -v: what each seed does
		t.Logf("the sequence:\n  %s", strings.Join(done, "\n  "))
	}
	a, b := readback(ctx, lite), readback(ctx, pg)
	for i := range max(len(a), len(b)) {
		la, lb := line(a, i), line(b, i)
		if la != lb || strings.Contains(la, unmatched) || strings.Contains(lb, unmatched) {
			fail("read-back differs after the sequence, line %d:\n  sqlite:   %s\n  postgres: %s", i, la, lb)
		}
	}
}

func line(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return "(none)"
}
