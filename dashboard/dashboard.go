package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/runs"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Prefix is where every page but the runs page ("/") lives; Handler
// answers "/" and everything under Prefix.
const Prefix = "/ui/"

// states are the run states, in the order the counts table shows them.
var states = []runs.State{runs.StateAvailable, runs.StateRunning, runs.StateBlocked,
	runs.StateCompleted, runs.StateFailed, runs.StateCancelled}

// page is what every template gets.
type page struct {
	Name   string // data-page: which part of app.js runs
	Title  string
	Nav    string // the nav entry marked current
	Query  filter // the runs page's filter, as asked
	States []runs.State
	RunID  int64
	World  string
	// Message is the not-found page's text.
	Message string
}

// filter is the runs page's query: the form shows it back.
type filter struct {
	Queue, State, Owner, Key, After string
}

// Handler returns the dashboard: the pages and their assets.
func Handler() http.Handler {
	tpl := template.Must(template.New("").ParseFS(templateFS, "templates/*.html"))
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	render := func(w http.ResponseWriter, status int, name string, p page) {
		var buf bytes.Buffer
		if err := tpl.ExecuteTemplate(&buf, name, p); err != nil {
			http.Error(w, "dashboard: rendering "+name+": "+err.Error(), http.StatusInternalServerError)
			return
		}
		headers(w)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write(buf.Bytes())
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		render(w, http.StatusOK, "runs.html", page{Name: "runs", Title: "Queues and runs", Nav: "runs", States: states,
			Query: filter{Queue: q.Get("queue"), State: q.Get("state"), Owner: q.Get("owner"), Key: q.Get("unique_key"), After: q.Get("after")}})
	})
	mux.HandleFunc("GET /ui/login", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "login.html", page{Name: "login", Title: "Sign in"})
	})
	// The search form asks /ui/runs?id=N: it goes to the run's page.
	mux.HandleFunc("GET /ui/runs", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(strings.TrimSpace(r.URL.Query().Get("id")), 10, 64)
		if err != nil || id <= 0 {
			notFound(w, render, "There is no run with that id: a run id is a positive whole number.")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("%sruns/%d", Prefix, id), http.StatusSeeOther)
	})
	mux.HandleFunc("GET /ui/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil || id <= 0 {
			notFound(w, render, "There is no run with that id: a run id is a positive whole number.")
			return
		}
		render(w, http.StatusOK, "run.html", page{Name: "run", Title: fmt.Sprintf("Run %d", id), Nav: "runs", RunID: id})
	})
	mux.HandleFunc("GET /ui/leases", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "leases.html", page{Name: "leases", Title: "Live leases", Nav: "leases"})
	})
	mux.HandleFunc("GET /ui/health", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "health.html", page{Name: "health", Title: "Health and throughput", Nav: "health"})
	})
	mux.HandleFunc("GET /ui/worlds", func(w http.ResponseWriter, r *http.Request) {
		render(w, http.StatusOK, "worlds.html", page{Name: "worlds", Title: "Worlds", Nav: "worlds", Query: filter{After: r.URL.Query().Get("after")}})
	})
	mux.HandleFunc("GET /ui/worlds/{world}", func(w http.ResponseWriter, r *http.Request) {
		world := r.PathValue("world")
		if journal.ValidateID("world", world) != nil {
			notFound(w, render, "That is not a world id.")
			return
		}
		render(w, http.StatusOK, "world.html", page{Name: "world", Title: "World " + world, Nav: "worlds", World: world})
	})
	static := http.StripPrefix(Prefix+"assets/", http.FileServerFS(assets))
	etags := etagsOf(assets)
	mux.Handle("GET /ui/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers(w)
		// Revalidated each time (a new binary's assets are seen at once),
		// answered 304 by the content hash when unchanged.
		w.Header().Set("Cache-Control", "no-cache")
		if tag, ok := etags[strings.TrimPrefix(r.URL.Path, Prefix+"assets/")]; ok {
			w.Header().Set("ETag", tag)
		}
		static.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /ui/", func(w http.ResponseWriter, r *http.Request) {
		notFound(w, render, "There is no such page.")
	})
	return mux
}

// headers are every answer's: the pages load nothing but their own
// assets and run no inline script, and no other site may frame them.
func headers(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

func notFound(w http.ResponseWriter, render func(http.ResponseWriter, int, string, page), msg string) {
	render(w, http.StatusNotFound, "notfound.html", page{Name: "notfound", Title: "Not found", Message: msg})
}

// etagsOf hashes every embedded asset once: embed gives no modification
// times, so the content hash is what a revalidation compares.
func etagsOf(fsys fs.FS) map[string]string {
	out := map[string]string{}
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = `"` + hex.EncodeToString(sum[:12]) + `"`
		return nil
	})
	return out
}
