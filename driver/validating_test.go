package driver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryParamsIsValidatedAboveTheDriver guards SPEC §5's "validated
// once, above the drivers": every Driver method that takes a *…Params has
// a Validate on that type, and Validating defines that method itself (in
// validating.go) rather than passing it through to the store unchecked.
func TestEveryParamsIsValidatedAboveTheDriver(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("validating*.go") // validating.go and its per-store parts (validating_queues.go)
	require.NoError(t, err)
	defined := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			if id, ok := fd.Recv.List[0].Type.(*ast.Ident); ok && id.Name == "validating" {
				defined[fd.Name.Name] = true
			}
		}
	}
	validator := reflect.TypeOf((*interface{ Validate() error })(nil)).Elem()
	it := reflect.TypeOf((*Driver)(nil)).Elem()
	n := 0
	for i := range it.NumMethod() {
		m := it.Method(i)
		if m.Type.NumIn() < 2 {
			continue
		}
		p := m.Type.In(1)
		if p.Kind() != reflect.Pointer || !strings.HasSuffix(p.Elem().Name(), "Params") {
			continue
		}
		n++
		require.True(t, p.Implements(validator), "%s has no Validate (method %s)", p.Elem().Name(), m.Name)
		require.True(t, defined[m.Name], "Validating does not check %s", m.Name)
	}
	require.Equal(t, 49, n, "the Driver methods taking params") // 36 + TokenStore (4) + RunDeleteFinished, RunRelease + QueueStore (3) + SnapshotStore (2) + RunRetry + RunEventListQueue
}
