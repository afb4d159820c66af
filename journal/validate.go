package journal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/leasehold/leasehold/lease"
)

// Input limits. They bound what one request can make the store hold; a
// payload past MaxPayloadBytes is refused before any write. docs/LIMITS.md
// lists every limit with the edge that enforces it.
const (
	// MaxPayloadBytes bounds a payload's compact form (what is stored,
	// hashed and exported): 64 KiB.
	MaxPayloadBytes = 64 << 10
	// MaxPayloadRawBytes bounds a payload as handed in, before compaction:
	// 1 MiB, 16 × MaxPayloadBytes, so pretty-printed or padded JSON whose
	// compact form fits is accepted, while the work of validating and
	// compacting one payload stays bounded (one linear pass over at most
	// 1 MiB) before the compact limit can be checked.
	MaxPayloadRawBytes = 16 * MaxPayloadBytes
	// MaxPayloadDepth bounds the nesting of a payload's arrays and objects:
	// 64. What is accepted must export, audit and import: a payload 10,000
	// deep was accepted and its JSONL line (one object level more) then
	// broke encoding/json's own bound of 10,000. 64 leaves room for every
	// envelope a payload travels in (the JSONL line, the API's documents)
	// under common decoders' limits (serde_json's default is 128).
	MaxPayloadDepth = 64
	MaxIDBytes      = 128 // world and holder identifiers
	MaxKindBytes    = 128
	MaxKeyBytes     = 256
)

// InputError is input refused before anything was written. It unwraps to
// lease.ErrInvalid.
type InputError struct {
	Field   string
	Problem string
}

func (e *InputError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Field, e.Problem) }

// Unwrap makes errors.Is(err, lease.ErrInvalid) true.
func (e *InputError) Unwrap() error { return lease.ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &InputError{Field: field, Problem: fmt.Sprintf(format, args...)}
}

// ValidateID checks a world or holder identifier: 1..MaxIDBytes of
// [A-Za-z0-9._:@/-]. Identifiers end up in logs, URLs and JSONL, so they
// carry no spaces or control characters.
func ValidateID(field, id string) error {
	if id == "" {
		return invalid(field, "must not be empty")
	}
	if len(id) > MaxIDBytes {
		return invalid(field, "%d bytes is over the limit of %d", len(id), MaxIDBytes)
	}
	for i, c := range id {
		if !idChar(c) {
			return invalid(field, "character %q at byte %d is not one of A-Z a-z 0-9 . _ : @ / -", c, i)
		}
	}
	return nil
}

func idChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._:@/-", c)
}

var reservedPrefixes = []string{"lease.", "append.", "world."}

// ValidateKind checks an entry kind. User data kinds follow the ID alphabet
// and may not use the reserved prefixes "lease.", "append." and "world.";
// with system true the defined system kinds are also allowed (reading a
// journal), and any other reserved kind is unknown.
func ValidateKind(k Kind, system bool) error {
	if err := ValidateID("kind", string(k)); err != nil {
		return err
	}
	if len(k) > MaxKindBytes {
		return invalid("kind", "%d bytes is over the limit of %d", len(k), MaxKindBytes)
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(string(k), p) {
			if system && k.IsSystem() {
				return nil
			}
			if k.IsSystem() {
				return invalid("kind", "%q is written only by the store", k)
			}
			return invalid("kind", "unknown kind %q under the reserved prefix %q", k, p)
		}
	}
	return nil
}

// ValidateKey checks an optional key: an append's idempotency key, a run's
// unique key, an effect's key, and the keys of an imported journal. The
// one key rule:
//
//   - at most MaxKeyBytes bytes of valid UTF-8 (empty means no key);
//   - no control character at all: not C0 (U+0000–U+001F, so no NUL, tab
//     or line break), not DEL (U+007F), not C1 (U+0080–U+009F, which
//     terminals and log viewers act on: U+0085 is a line break to many);
//   - no bidirectional embedding, override or isolate (U+202A–U+202E,
//     U+2066–U+2069), which make a key display as another key.
//
// It is the reason rule of reason.go without that rule's allowance for
// tab, line feed and carriage return: a key is an identifier, not text.
// Everything else — any letter, mark, space or symbol — is allowed and
// compared byte for byte (a precomposed and a decomposed é are two keys).
func ValidateKey(key string) error {
	if len(key) > MaxKeyBytes {
		return invalid("key", "%d bytes is over the limit of %d", len(key), MaxKeyBytes)
	}
	if !utf8.ValidString(key) {
		return invalid("key", "not valid UTF-8")
	}
	for i, c := range key {
		if controlOrBidi(c) {
			return invalid("key", "control character %U at byte %d (no C0, DEL, C1 or bidi control in a key)", c, i)
		}
	}
	return nil
}

// controlOrBidi is the character test shared by the key rule and the
// reason rule: C0, DEL, C1, and the bidi embeddings, overrides and
// isolates.
func controlOrBidi(c rune) bool {
	switch {
	case c < 0x20 || c == 0x7f, c >= 0x80 && c <= 0x9f:
		return true
	case c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069:
		return true
	}
	return false
}

// NormalizePayload validates a payload and returns its canonical stored form:
// compact JSON, valid UTF-8, nested at most MaxPayloadDepth deep, at most
// MaxPayloadBytes once compact (input of up to MaxPayloadRawBytes is
// compacted first: whitespace does not count). An empty payload is stored
// as JSON null. It is the one JSON rule for every payload and result the
// library stores (runs.NormalizePayload applies it), so whatever it accepts
// exports, audits and imports. Compact form is what makes the JSONL export byte-exact,
// so a payload's hash survives export and import.
func NormalizePayload(p []byte) ([]byte, error) { return normalizePayload(p, true) }

// NormalizePayloadShared is NormalizePayload for a caller that only
// replaces p by the result and never writes to either: a payload already
// in its stored form is returned as is (p itself), not copied.
func NormalizePayloadShared(p []byte) ([]byte, error) { return normalizePayload(p, false) }

// normalizePayload is NormalizePayload; with clone false, a payload
// already in its stored form is returned as is (the caller's own bytes),
// for a caller that only replaces p by the result.
func normalizePayload(p []byte, clone bool) ([]byte, error) {
	// JSON's own whitespace only (RFC 8259 §2): bytes.TrimSpace also trims
	// Unicode spaces, and so took a payload of a lone U+00A0 or U+0085 —
	// not JSON — for an empty one and stored it as null.
	if len(p) == 0 || jsonSpace(p[0]) && len(bytes.Trim(p, " \t\r\n")) == 0 {
		return []byte("null"), nil
	}
	if len(p) > MaxPayloadRawBytes { // refuse before spending work on it
		return nil, invalid("payload", "%d bytes of input is over the limit of %d before compaction (the limit is %d bytes of compact JSON)", len(p), MaxPayloadRawBytes, MaxPayloadBytes)
	}
	if !utf8.Valid(p) {
		return nil, invalid("payload", "not valid UTF-8")
	}
	if len(p) <= MaxPayloadBytes && compactValid(p) { // the stored form already (compact.go): one pass
		if !clone {
			return p, nil
		}
		return bytes.Clone(p), nil
	}
	d, loose := jsonShape(p)
	if d > MaxPayloadDepth {
		return nil, invalid("payload", "nested %d deep (at least), over the limit of %d", d, MaxPayloadDepth)
	}
	// Already compact (no whitespace outside strings: every payload the
	// library encodes itself, and each later pass over it) and small
	// enough: validating is the whole work, and json.Valid does it without
	// building a copy byte by byte. The copy keeps the old contract: the
	// result never aliases the caller's buffer.
	if !loose && len(p) <= MaxPayloadBytes && json.Valid(p) {
		if !clone {
			return p, nil
		}
		return bytes.Clone(p), nil
	}
	// json.Compact validates as it compacts (one scan, not two).
	var buf bytes.Buffer
	buf.Grow(len(p))
	if err := json.Compact(&buf, p); err != nil {
		return nil, invalid("payload", "malformed JSON: %v", err)
	}
	if buf.Len() > MaxPayloadBytes {
		return nil, invalid("payload", "%d bytes of compact JSON is over the limit of %d", buf.Len(), MaxPayloadBytes)
	}
	return buf.Bytes(), nil
}

func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// jsonDepth is the deepest nesting of arrays and objects in p, outside
// strings, stopping early once past MaxPayloadDepth. It does not check
// that p is JSON (json.Valid does, after it): it only keeps a deep
// document from being parsed at all.
func jsonDepth(p []byte) int {
	d, _ := jsonShape(p)
	return d
}

// jsonShape is jsonDepth and, in the same scan, whether p has JSON
// whitespace outside strings (loose: compacting would change it).
func jsonShape(p []byte) (deepest int, loose bool) {
	depth := 0
	inString, escaped := false, false
	for _, c := range p {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			loose = true
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > MaxPayloadDepth {
					return deepest, loose
				}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest, loose
}

// ValidateAppend checks an append request's input and normalizes its
// payload in place. It does not look at the lease: that is CheckAppend.
func ValidateAppend(r *AppendRequest) error {
	if err := ValidateID("holder", r.Holder); err != nil {
		return err
	}
	if r.Epoch <= 0 {
		return invalid("epoch", "%d is not a positive epoch", r.Epoch)
	}
	if r.SeenPosition < 0 {
		return invalid("seen_position", "%d is negative", r.SeenPosition)
	}
	if r.Position < 0 {
		return invalid("position", "%d is negative", r.Position)
	}
	if len(r.Signature) != 0 && (len(r.Signature) != SignatureSize || r.Position == 0) {
		return invalid("signature", "%d bytes at position %d: a signature is %d bytes, on a request that names its position",
			len(r.Signature), r.Position, SignatureSize)
	}
	if err := ValidateKind(r.Kind, false); err != nil {
		return err
	}
	if err := ValidateKey(r.Key); err != nil {
		return err
	}
	p, err := normalizePayload(r.Payload, false)
	if err != nil {
		return err
	}
	r.Payload = p
	return nil
}

// Signed reports whether a batch of append requests is signed: any request
// names a position or carries a signature.
func Signed(reqs []AppendRequest) bool {
	for i := range reqs {
		if reqs[i].Position != 0 || len(reqs[i].Signature) != 0 {
			return true
		}
	}
	return false
}

// ValidateSignedBatch checks the shape of a signed batch (journal/sign.go):
// one holder and one epoch, consecutive positions, no key twice, and the
// signature on the last request only. A signed batch is written whole or
// not at all, so a key it carried twice could never be answered.
func ValidateSignedBatch(reqs []AppendRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	first, keys := reqs[0], make(map[string]bool, len(reqs))
	for i := range reqs {
		r := &reqs[i]
		switch {
		case r.Holder != first.Holder || r.Epoch != first.Epoch:
			return invalid("batch", "a signed batch is one holder's under one epoch: request %d is %q under %d, request 0 %q under %d",
				i, r.Holder, r.Epoch, first.Holder, first.Epoch)
		case r.Position != first.Position+int64(i) || r.Position <= 0:
			return invalid("position", "request %d names position %d; a signed batch names consecutive positions from %d",
				i, r.Position, first.Position)
		case (len(r.Signature) != 0) != (i == len(reqs)-1):
			return invalid("signature", "request %d of %d: the last request of a signed batch, and only it, carries the signature", i, len(reqs))
		case r.Key != "" && keys[r.Key]:
			return invalid("key", "%q twice in one signed batch", r.Key)
		}
		keys[r.Key] = r.Key != ""
	}
	return nil
}
