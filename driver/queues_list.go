package driver

import (
	"cmp"
	"slices"

	"github.com/leasehold/leasehold/runs"
)

// QueueCount is one (queue, state) group of the runs table.
type QueueCount struct {
	Queue string
	State runs.State
	N     int64
}

// MergeQueues is QueueList's answer from the registry rows and the runs
// counted by (queue, state): every queue of either, ordered by name, a
// queue known only by its runs with the zero registry fields. Both
// drivers build their listing with it, so they list alike.
func MergeQueues(registry []*Queue, counts []QueueCount) []*Queue {
	byName := make(map[string]*Queue, len(registry))
	out := make([]*Queue, 0, len(registry))
	for _, q := range registry {
		byName[q.Name] = q
		out = append(out, q)
	}
	for _, c := range counts {
		q := byName[c.Queue]
		if q == nil {
			q = &Queue{Name: c.Queue}
			byName[c.Queue] = q
			out = append(out, q)
		}
		if q.Counts == nil {
			q.Counts = map[runs.State]int64{}
		}
		q.Counts[c.State] += c.N
	}
	slices.SortFunc(out, func(a, b *Queue) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
