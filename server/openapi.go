package server

import (
	_ "embed"
	"net/http"
)

// openAPI is the API's OpenAPI 3.1 document, kept in the repository beside
// the code (openapi.json) and held to routes.go by
// TestOpenAPIMatchesRoutes.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document served at /openapi.json.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openAPI)
}
