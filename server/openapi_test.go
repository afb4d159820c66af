package server_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/leasehold/leasehold"
	"github.com/leasehold/leasehold/server"
)

// TestOpenAPIMatchesRoutes: openapi.json (kept in the repository, served
// at /openapi.json) documents exactly the routes the server registers —
// no route undocumented, no documented route missing — and exactly the
// problem types it answers with.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, stores[0].open, leasehold.Config{}, server.Config{})
	r := b.get(t, "/openapi.json")
	require.Equal(t, "application/json", r.ctype)
	require.Equal(t, server.OpenAPI(), r.body, "the served document is the one in the repository")

	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3.1."), doc.OpenAPI)
	var documented []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	registered := b.s.RouteKeys()
	sort.Strings(documented)
	sort.Strings(registered)
	require.Equal(t, registered, documented, "routes.go and openapi.json differ")

	types := doc.Components.Schemas["Problem"].Properties["type"].Enum
	want := append([]string(nil), server.ProblemTypes...)
	sort.Strings(types)
	sort.Strings(want)
	require.Equal(t, want, types, "the problem types in openapi.json")
}
