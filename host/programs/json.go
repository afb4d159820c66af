package programs

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/leasehold/leasehold/host"
)

// strictJSON decodes one JSON object, refusing unknown fields and
// trailing data.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the command")
	}
	return nil
}

func compact(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

func event(kind string, v any) host.Event {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // the event types are plain structs
	}
	return host.Event{Kind: kind, Data: b}
}

func reply(r any, evs []host.Event) (host.Decision, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return host.Decision{}, err
	}
	return host.Decision{Events: evs, Reply: b}, nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
