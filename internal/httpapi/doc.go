// Package httpapi is what the two HTTP surfaces — the world host's API
// (package host) and `leasehold serve` (package server) — share at the
// edge: RFC 9457 problem documents with one stable type URI per error a
// caller matches, and strict JSON bodies (unknown fields, trailing data,
// invalid UTF-8 and unpaired surrogate escapes refused; size capped). A
// rule of the wire lives here once, so both surfaces refuse the same body
// the same way.
package httpapi
