package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/internal/keeper"
	"github.com/leasehold/leasehold/journal"
)

// The heartbeat-mode admin API: GET and POST /v1/admin/mode read and
// switch the heartbeat mode (SPEC §2: sync, dark, writebehind) of the
// in-process workers attached to this server, one or all, at runtime.
// Switching is reversible and takes effect at each held run's next
// renewal (keeper.SetMode carries the newest evidence across). Each
// worker's /metrics series carry a worker label: the mode in force
// (leasehold_keeper_mode) and every switch by from and to
// (leasehold_keeper_mode_switches_total).
//
// Remote runners are listed and switched too (remote_mode.go): all of
// them as the worker "remote-holders" (the server's keeper for them, whose
// metrics carry that label), one of them as "remote:<owner>". all: true
// switches the attached workers and every remote runner.

// workers are the in-process workers attached to the server, by name.
type workers struct {
	mu sync.Mutex
	m  map[string]*leasehold.Worker
}

// AttachWorker puts w under the admin mode API as name, and its collector
// on /metrics with the label worker=name. Attach before serving.
func (s *Server) AttachWorker(name string, w *leasehold.Worker) error {
	if err := journal.ValidateID("worker", name); err != nil {
		return err
	}
	if name == remoteHoldersWorker || strings.HasPrefix(name, remoteOwnerPrefix) {
		return &journal.InputError{Field: "worker", Problem: fmt.Sprintf("%q is the admin mode API's name of remote runners (remote_mode.go)", name)}
	}
	s.workers.mu.Lock()
	defer s.workers.mu.Unlock()
	if s.workers.m == nil {
		s.workers.m = map[string]*leasehold.Worker{}
	}
	if _, dup := s.workers.m[name]; dup {
		return fmt.Errorf("server: worker %q is already attached: %w", name, leasehold.ErrConflict)
	}
	if err := prometheus.WrapRegistererWith(prometheus.Labels{"worker": name}, s.metrics.reg).Register(w.Collector()); err != nil {
		return fmt.Errorf("server: registering worker %q's metrics: %w", name, err)
	}
	s.workers.m[name] = w
	return nil
}

// WorkerMode is one worker's mode on the wire.
type WorkerMode struct {
	Worker string `json:"worker"`
	Mode   string `json:"mode"`
	// Previous is the mode before this switch (POST answers only).
	Previous string `json:"previous,omitempty"`
}

// ModeList is GET /v1/admin/mode's answer, and POST's: the workers it
// names, by name.
type ModeList struct {
	Workers []WorkerMode `json:"workers"`
}

// ModeRequest is POST /v1/admin/mode's body: the mode, and either one
// worker or all of them.
type ModeRequest struct {
	Mode   string `json:"mode"`
	Worker string `json:"worker,omitempty"`
	All    bool   `json:"all,omitempty"`
}

// named returns the attached workers' names, sorted.
func (s *Server) workerNames() []string {
	s.workers.mu.Lock()
	defer s.workers.mu.Unlock()
	names := make([]string, 0, len(s.workers.m))
	for n := range s.workers.m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *Server) worker(name string) *leasehold.Worker {
	s.workers.mu.Lock()
	defer s.workers.mu.Unlock()
	return s.workers.m[name]
}

// getModes lists the attached workers, by name, then the remote runners:
// "remote-holders" and each runner with a mode of its own.
func (s *Server) getModes(w http.ResponseWriter, r *http.Request) {
	out := ModeList{Workers: []WorkerMode{}}
	for _, n := range s.workerNames() {
		out.Workers = append(out.Workers, WorkerMode{Worker: n, Mode: s.worker(n).Mode().String()})
	}
	out.Workers = append(out.Workers, WorkerMode{Worker: remoteHoldersWorker, Mode: s.book.k.Mode().String()})
	out.Workers = append(out.Workers, s.book.ownerModeList()...)
	writeJSON(w, out)
}

func (s *Server) setModes(w http.ResponseWriter, r *http.Request) {
	var req ModeRequest
	if err := s.decode(w, r, &req); err != nil {
		s.problem(w, r, err)
		return
	}
	m, err := leasehold.ParseHeartbeatMode(req.Mode)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var names []string
	remoteAll, owner := req.All, ""
	switch {
	case req.All == (req.Worker != ""):
		s.problem(w, r, &journal.InputError{Field: "worker", Problem: "name one worker, or set all: true (not both)"})
		return
	case req.All:
		names = s.workerNames()
	case req.Worker == remoteHoldersWorker:
		remoteAll = true
	case strings.HasPrefix(req.Worker, remoteOwnerPrefix):
		o, _, err := remoteOwner(req.Worker)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		owner = o
	default:
		if s.worker(req.Worker) == nil {
			s.problem(w, r, fmt.Errorf("no worker %.80q is attached to this server: %w", req.Worker, leasehold.ErrNotFound))
			return
		}
		names = []string{req.Worker}
	}
	out := ModeList{Workers: []WorkerMode{}}
	for _, n := range names {
		wk := s.worker(n)
		prev := wk.Mode()
		if err := wk.SetMode(m); err != nil {
			s.problem(w, r, err)
			return
		}
		s.cfg.Logger.Info("heartbeat mode set through the admin API", "worker", n, "from", prev, "to", m)
		out.Workers = append(out.Workers, WorkerMode{Worker: n, Mode: m.String(), Previous: prev.String()})
	}
	var prev keeper.Mode
	switch {
	case remoteAll:
		prev, err = s.book.setMode(keeper.Mode(m))
		names = []string{remoteHoldersWorker}
	case owner != "":
		prev, err = s.book.setOwnerMode(owner, keeper.Mode(m))
		names = []string{req.Worker}
	default:
		writeJSON(w, out)
		return
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.cfg.Logger.Info("heartbeat mode set through the admin API", "worker", names[0], "from", prev, "to", m)
	out.Workers = append(out.Workers, WorkerMode{Worker: names[0], Mode: m.String(), Previous: prev.String()})
	writeJSON(w, out)
}
