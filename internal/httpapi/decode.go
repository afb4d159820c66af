package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/leasehold/leasehold/journal"
	"github.com/leasehold/leasehold/lease"
)

// TooLargeError is a request body over the surface's cap, refused unread
// past the cap. It matches lease.ErrInvalid, so a caller that only knows
// the sentinels still sees a refused input; a surface answers it with
// ProblemTooLarge (413).
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("request body is over the limit of %d bytes", e.Limit)
}

// Unwrap returns lease.ErrInvalid.
func (e *TooLargeError) Unwrap() error { return lease.ErrInvalid }

// Decode reads r's body, at most limit bytes, into v strictly: unknown
// fields and trailing data are refused, as is a body that is not one JSON
// value. Every refusal is a *journal.InputError (ErrInvalid) naming the
// body, or a *TooLargeError, and nothing of v is to be used then.
// Decoding is all-or-nothing because the whole body is read before it is
// parsed: a half-read body never reaches a store.
func Decode(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return &TooLargeError{Limit: limit}
		}
		return &journal.InputError{Field: "body", Problem: fmt.Sprintf("unreadable: %v", err)}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &journal.InputError{Field: "body", Problem: err.Error()}
	}
	if dec.More() {
		return &journal.InputError{Field: "body", Problem: "trailing data after the JSON object"}
	}
	return nil
}
