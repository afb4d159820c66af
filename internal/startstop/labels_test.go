package startstop

import (
	"bytes"
	"fmt"
	"runtime/pprof"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoLabelsEveryGoroutine: a goroutine started by Go carries its
// service's and its loop's pprof labels, from the cached labels and, past
// the cache's bound, from labels made for the call.
func TestGoLabelsEveryGoroutine(t *testing.T) {
	l := &Lifecycle{Name: "svc"}
	release := make(chan struct{})
	const loops = maxCachedLoops + 3
	running := make(chan struct{}, 2*loops)
	for i := range loops {
		for range 2 { // the second start of a loop name takes the cached labels
			l.Go(fmt.Sprintf("loop-%d", i), func() {
				running <- struct{}{}
				<-release
			})
		}
	}
	for range 2 * loops {
		<-running
	}
	var dump bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&dump, 1))
	close(release)
	l.wg.Wait()
	for i := range loops {
		// debug=1 prints the labels of each group of goroutines.
		want := fmt.Sprintf(`# labels: {"loop":"loop-%d", "service":"svc"}`, i)
		require.Contains(t, dump.String(), want)
	}
	require.Len(t, l.labels, maxCachedLoops)
}
