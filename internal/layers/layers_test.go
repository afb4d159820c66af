package layers

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/leasehold/leasehold"

// rule is what one package's non-test files may import from this module
// (by path relative to the module root, "" for the root package) and which
// outside modules beyond the standard library. docs/ARCHITECTURE.md states
// the same table in prose; change both together.
type rule struct {
	layer   string
	inside  []string // module packages it may import
	outside []string // import path prefixes of other modules it may import
	noStd   []string // standard library packages it must not import (the pure core's "no I/O")
	// noLink are outside modules it must not link at all, through any
	// chain of the module's own packages (the public face links no
	// database driver: the user passes one in).
	noLink []string
}

var (
	foundation = []string{"clock", "lease"}
	pureCore   = append([]string{"journal", "runs", "auth"}, foundation...)
	driverAPI  = append([]string{"driver"}, pureCore...)
	lifecycle  = []string{"internal/rt", "internal/startstop", "internal/batcher"}
	// io is what a pure package must not reach for: databases, the network,
	// processes, files (journal's JSONL reader takes an io.Reader instead).
	io = []string{"database/sql", "net", "net/http", "os", "os/exec", "syscall"}
)

func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

var rules = map[string]rule{
	// foundation: no module imports at all
	"clock":         {layer: "foundation", noStd: io},
	"lease":         {layer: "foundation", noStd: io},
	"internal/bugs": {layer: "foundation"},

	// pure core: decisions over injected time, no I/O
	"journal": {layer: "pure core", inside: foundation, noStd: io},
	"runs":    {layer: "pure core", inside: join([]string{"journal"}, foundation), noStd: io},
	// API tokens: secrets, hashes and scope rules; the store keeps them
	"auth": {layer: "pure core", inside: join([]string{"journal"}, foundation), noStd: io},

	// the driver interface and the drivers: SQL and error mapping only;
	// a driver imports no other driver and none of the machinery above it
	// (its validating wrapper traces store writes inside a traced call:
	// the OpenTelemetry API only, never an SDK or exporter)
	"driver":          {layer: "driver interface", inside: pureCore, outside: []string{"go.opentelemetry.io/otel"}},
	"driver/sqlite":   {layer: "driver", inside: join(driverAPI, []string{"internal/bugs"}), outside: []string{"modernc.org/sqlite"}},
	"driver/postgres": {layer: "driver", inside: join(driverAPI, []string{"internal/bugs"}), outside: []string{"github.com/jackc/pgx/v5"}},
	// libSQL is the SQLite driver on another engine (sqlite.OpenEngine):
	// the one driver that imports another, the one it runs.
	"driver/libsql": {layer: "driver", inside: join(driverAPI, []string{"driver/sqlite"}), outside: []string{"github.com/tursodatabase/go-libsql"}},

	// machinery: over the driver interface, never a concrete driver; the
	// one lifecycle and the one batcher every service is built on
	"internal/rt":         {layer: "machinery", inside: foundation},
	"internal/startstop":  {layer: "machinery", inside: join(foundation, []string{"internal/rt"})},
	"internal/batcher":    {layer: "machinery", inside: join(foundation, []string{"internal/rt", "internal/startstop"})},
	"internal/keeper":     {layer: "machinery", inside: join(pureCore, lifecycle, []string{"internal/bugs", "internal/clockwatch"}), outside: []string{"github.com/prometheus/client_golang"}},
	"internal/doctor":     {layer: "machinery", inside: foundation},
	"internal/clockwatch": {layer: "machinery", inside: foundation, noStd: io},
	"internal/world":      {layer: "machinery", inside: join(driverAPI, lifecycle, []string{"internal/bugs"})},
	"internal/scheduler": {layer: "machinery", inside: join(driverAPI, lifecycle, []string{"internal/keeper", "internal/doctor"}),
		outside: []string{"github.com/prometheus/client_golang", "github.com/robfig/cron/v3"}},
	// the seam that lets a worker other than the scheduler's hand a handler
	// the same *leasehold.RunHandle (the remote worker)
	"internal/handle": {layer: "machinery", inside: []string{"internal/scheduler"}},

	// the world host: public because a user implements its Program and
	// runs it in their own process; it links no concrete driver either
	"host": {layer: "world host", inside: join(driverAPI, lifecycle, []string{"internal/world", "internal/httpapi", "internal/bugs"}),
		noLink: []string{"github.com/jackc/pgx/v5", "modernc.org/sqlite"}},
	"host/programs": {layer: "world host", inside: join(foundation, []string{"host"})},

	// the HTTP edge both surfaces share: problem documents, strict bodies
	"internal/httpapi": {layer: "http edge", inside: pureCore},

	// the public face: the machinery, never a concrete driver (the user
	// passes one to NewClient), so it links neither database library
	// (Worker.Collector hands out the keeper's Prometheus collector)
	"": {layer: "public face", inside: join(driverAPI, lifecycle, []string{"internal/keeper", "internal/scheduler", "internal/handle", "internal/world", "internal/doctor", "host"}),
		outside: []string{"github.com/prometheus/client_golang"}, noLink: []string{"github.com/jackc/pgx/v5", "modernc.org/sqlite"}},
	// test helpers for users' tests (River's rivertest): over the public
	// face; pgx for reading through a caller's pgx.Tx (test binaries only)
	"leaseholdtest": {layer: "test helpers", inside: join([]string{""}, driverAPI), outside: []string{"github.com/jackc/pgx/v5"}},
	// the HTTP API over a client: like the public face, it links no
	// concrete driver (the CLI opens one and hands over the client)
	// (and the world host a program attaches to it, for commands)
	"server": {layer: "surface", inside: join([]string{"", "internal/httpapi", "host", "dashboard", "internal/clockwatch", "internal/doctor", "internal/keeper", "internal/rt"}, driverAPI),
		outside: []string{"github.com/prometheus/client_golang", "golang.org/x/time/rate", "go.opentelemetry.io/otel"}, noLink: []string{"github.com/jackc/pgx/v5", "modernc.org/sqlite"}},
	// the web dashboard the server serves: page shells and assets that
	// know the API only as HTTP, so below the server and above nothing
	"dashboard": {layer: "dashboard", inside: pureCore, noLink: []string{"github.com/jackc/pgx/v5", "modernc.org/sqlite"}},
	// the Go client of the HTTP API and its remote worker: over the wire
	// only, so it links no database library
	"remote": {layer: "client", inside: join([]string{"", "internal/handle", "internal/scheduler"}, pureCore),
		noLink: []string{"github.com/jackc/pgx/v5", "modernc.org/sqlite"}},
	// a program on the embedded store alone links no pgx
	"examples/sqliteonly": {layer: "example", inside: []string{"", "driver/sqlite"}, noLink: []string{"github.com/jackc/pgx/v5"}},
	"examples/billing":    {layer: "example", inside: []string{"", "driver/sqlite"}, noLink: []string{"github.com/jackc/pgx/v5"}},

	// tools and test infrastructure
	"internal/sim": {layer: "tool", inside: join(driverAPI, lifecycle, []string{"internal/keeper", "internal/scheduler", "internal/world", "driver/sqlite",
		"internal/bugs", "host", "host/programs"}), outside: []string{"github.com/anishathalye/porcupine"}},
	// drivertest → world is the one crossing left: its sweep case drives
	// world.Sweeper; the thin-drivers change moves the sweep loop and drops it.
	"driver/drivertest":   {layer: "conformance suite", inside: join(driverAPI, []string{"world", "internal/hostile"}), outside: []string{"github.com/stretchr/testify", "github.com/jackc/pgx/v5"}},
	"internal/hostile":    {layer: "test infrastructure", inside: pureCore},
	"internal/testdb":     {layer: "test infrastructure", outside: []string{"github.com/jackc/pgx/v5"}},
	"internal/pgcluster":  {layer: "test infrastructure"},
	"internal/faultproxy": {layer: "test infrastructure"},
	"internal/witness":    {layer: "test infrastructure"},
	"internal/servetest":  {layer: "test infrastructure"},
	"internal/faulttest":  {layer: "test infrastructure"},
	"internal/layers":     {layer: "test infrastructure"},
	"internal/difftest":   {layer: "test infrastructure"},
	"internal/worldfault": {layer: "test infrastructure"},
	"internal/failover":   {layer: "test infrastructure"},
	"internal/scale":      {layer: "test infrastructure"},
	"model":               {layer: "test infrastructure"},
	"internal/bench":      {layer: "tool", inside: []string{"*"}, outside: []string{"*"}},
	"cmd/leasehold":       {layer: "tool", inside: []string{"*"}, outside: []string{"*"}},
}

// TestLayers walks the module's packages (every directory with non-test
// .go files, outside testdata and other modules) and checks each import
// against the table.
func TestLayers(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	imports := packageImports(t, root)
	require.NotEmpty(t, imports)
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		r, ok := rules[pkg]
		if !ok {
			t.Errorf("package %q has no layer: place it in docs/ARCHITECTURE.md and in this test's rules", display(pkg))
			continue
		}
		for _, imp := range imports[pkg] {
			if msg := r.check(imp); msg != "" {
				t.Errorf("%s (%s) imports %q: %s", display(pkg), r.layer, imp, msg)
			}
		}
	}
	for _, pkg := range pkgs {
		r := rules[pkg]
		for _, imp := range linked(imports, pkg) {
			for _, bad := range r.noLink {
				if imp == bad || strings.HasPrefix(imp, bad+"/") {
					t.Errorf("%s (%s) links %q through the module's own imports", display(pkg), r.layer, imp)
				}
			}
		}
	}
	for pkg := range rules {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("the rules place %q, which has no Go files: drop it from the table", display(pkg))
		}
	}
}

// linked is every import reachable from pkg through the module's own
// packages (outside packages' own imports are not followed: noLink names
// the outside module a chain would first reach).
func linked(imports map[string][]string, pkg string) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(p string)
	walk = func(p string) {
		for _, imp := range imports[p] {
			if seen[imp] {
				continue
			}
			seen[imp] = true
			out = append(out, imp)
			if rel, ok := strings.CutPrefix(imp, module); ok {
				walk(strings.TrimPrefix(rel, "/"))
			}
		}
	}
	walk(pkg)
	return out
}

func display(pkg string) string {
	if pkg == "" {
		return "leasehold (root)"
	}
	return pkg
}

// check reports why r forbids imp, or "".
func (r rule) check(imp string) string {
	if rel, ok := strings.CutPrefix(imp, module); ok {
		rel = strings.TrimPrefix(rel, "/")
		if allowed(r.inside, rel) {
			return ""
		}
		return "not a layer below it in docs/ARCHITECTURE.md"
	}
	if first, _, _ := strings.Cut(imp, "/"); !strings.Contains(first, ".") { // standard library
		for _, bad := range r.noStd {
			if imp == bad {
				return "the pure core and foundation do no I/O"
			}
		}
		return ""
	}
	for _, o := range r.outside {
		if o == "*" || imp == o || strings.HasPrefix(imp, o+"/") {
			return ""
		}
	}
	return "an outside dependency this layer may not link"
}

func allowed(list []string, rel string) bool {
	for _, a := range list {
		if a == "*" || a == rel {
			return true
		}
	}
	return false
}

// packageImports maps each package directory (relative to root) to the
// imports of its non-test files. Other modules (a go.mod below root) and
// testdata are skipped.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // its own module (bench/peers)
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		if _, ok := out[rel]; !ok {
			out[rel] = nil
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			out[rel] = append(out[rel], p)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestLayerRuleRefuses: the check is not vacuous — the imports the layers
// forbid are refused.
func TestLayerRuleRefuses(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, rules["journal"].check(module+"/driver"), "the pure core importing the driver interface")
	require.NotEmpty(t, rules["runs"].check("database/sql"), "the pure core doing I/O")
	require.NotEmpty(t, rules["internal/scheduler"].check(module+"/driver/postgres"), "the machinery importing a concrete driver")
	require.NotEmpty(t, rules["driver/sqlite"].check(module+"/driver/postgres"), "one driver importing another")
	require.NotEmpty(t, rules["driver/sqlite"].check("github.com/jackc/pgx/v5"), "SQLite linking pgx")
	require.NotEmpty(t, rules["internal/keeper"].check(module+"/driver"), "the keeper reaching the store other than through its Flusher")
	require.NotEmpty(t, rules[""].check(module+"/driver/postgres"), "the public face importing a concrete driver")
	require.Empty(t, rules["internal/scheduler"].check(module+"/internal/keeper"))
	chain := map[string][]string{"": {module + "/internal/scheduler"}, "internal/scheduler": {module + "/driver/postgres"},
		"driver/postgres": {"github.com/jackc/pgx/v5/pgxpool"}}
	require.Contains(t, linked(chain, ""), "github.com/jackc/pgx/v5/pgxpool", "a link two packages down is found")
}
