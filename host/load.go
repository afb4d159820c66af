package host

import (
	"sync"
	"time"
)

// Load is a world's recent load on its holder: what the hot-world band
// judges.
type Load struct {
	// TurnsPerSecond is the rate of journaled commands over the last
	// window (about one second).
	TurnsPerSecond float64 `json:"turns_per_second"`
	// InboxDepth is the deepest the inbox was in the last window.
	InboxDepth int `json:"inbox_depth"`
	// TurnLatency is the mean time from taking a batch to its answers.
	TurnLatency time.Duration `json:"turn_latency_ns"`
}

// loadMeter measures a world's load in windows of about a second.
type loadMeter struct {
	mu       sync.Mutex
	start    time.Time // the current window's start
	turns    int
	depth    int
	latSum   time.Duration
	batches  int
	last     Load
	lastSeen bool
	window   time.Duration // 0: loadWindow
}

const loadWindow = time.Second

func (l *loadMeter) init(now time.Time) { l.start = now }

func (l *loadMeter) queued(depth int) {
	l.mu.Lock()
	l.depth = max(l.depth, depth)
	l.mu.Unlock()
}

func (l *loadMeter) turned(n int, lat time.Duration) {
	l.mu.Lock()
	l.turns += n
	l.latSum += lat
	l.batches++
	l.mu.Unlock()
}

// read returns the load of the last complete window, closing the current
// one if it is over.
func (l *loadMeter) read(now time.Time) Load {
	l.mu.Lock()
	defer l.mu.Unlock()
	win := l.window
	if win <= 0 {
		win = loadWindow
	}
	if el := now.Sub(l.start); el >= win {
		ld := Load{TurnsPerSecond: float64(l.turns) / el.Seconds(), InboxDepth: l.depth}
		if l.batches > 0 {
			ld.TurnLatency = l.latSum / time.Duration(l.batches)
		}
		l.last, l.lastSeen = ld, true
		l.start, l.turns, l.depth, l.latSum, l.batches = now, 0, 0, 0, 0
	}
	return l.last
}

// drainTime is how long the loop needs to take n commands at the last
// window's rate (at least 1 ms, at most 1 s).
func (l *loadMeter) drainTime(n int) time.Duration {
	l.mu.Lock()
	rate := l.last.TurnsPerSecond
	l.mu.Unlock()
	if rate <= 0 {
		return 100 * time.Millisecond
	}
	return min(max(time.Duration(float64(n)/rate*float64(time.Second)), time.Millisecond), time.Second)
}

// Load returns a held world's recent load; false if it is not held here.
func (h *Host) Load(w string) (Load, bool) {
	h.mu.Lock()
	hw := h.held[w]
	h.mu.Unlock()
	if hw == nil {
		return Load{}, false
	}
	return hw.load.read(h.clock.Now()), true
}
