package journal

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/leasehold/leasehold/lease"
)

// The JSONL export format: one entry per line, each line ending in "\n",
// then one end record (see Writer.Close) that proves the export whole;
// fields exactly these (unknown fields are refused on import):
//
//	{"world":"w1","position":1,"epoch":1,"kind":"lease.granted","holder":"home-1","key":"",
//	 "payload":{…compact JSON…},"store_time":"2026-11-30T09:00:00.123456Z",
//	 "prev_hash":"","hash":"<64 hex>","signature":""}
//
// payload is embedded verbatim (it is stored compact), so the canonical bytes
// and therefore the hash survive a round trip; hashes and signatures are hex.
type jsonlEntry struct {
	World     *string    `json:"world"`
	Position  *int64     `json:"position"`
	Epoch     *int64     `json:"epoch"`
	Kind      *string    `json:"kind"`
	Holder    *string    `json:"holder"`
	Key       *string    `json:"key"`
	Payload   presentRaw `json:"payload"`
	StoreTime *string    `json:"store_time"`
	PrevHash  *string    `json:"prev_hash"`
	Hash      *string    `json:"hash"`
	Signature *string    `json:"signature"`
}

// presentRaw is a JSON value that remembers being present: a payload may
// be JSON null (NormalizePayload stores an empty payload so), which a
// *json.RawMessage would read as absent.
type presentRaw struct {
	set bool
	raw json.RawMessage
}

// MarshalJSON implements json.Marshaler: the value as is.
func (p presentRaw) MarshalJSON() ([]byte, error) { return p.raw, nil }

// UnmarshalJSON implements json.Unmarshaler; it is called for null too.
func (p *presentRaw) UnmarshalJSON(b []byte) error {
	p.set = true
	p.raw = append(p.raw[:0], b...)
	return nil
}

// storeTimeLayout always prints six fractional digits: store times have
// microsecond resolution.
const storeTimeLayout = "2006-01-02T15:04:05.000000Z07:00"

// MaxJSONLLine bounds one line of an import: the largest payload plus room
// for the other fields. A longer line is refused, never truncated.
const MaxJSONLLine = MaxPayloadBytes + 4096

// Writer writes entries as JSONL. Close writes the end record that proves
// the export whole: an export without one was cut off.
type Writer struct {
	enc   *json.Encoder
	world string
	n     int64
	head  []byte // the last entry's hash
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // payload bytes must pass through unchanged
	return &Writer{enc: enc}
}

// Write writes one entry and its newline.
func (w *Writer) Write(e *Entry) error {
	payload := presentRaw{set: true, raw: json.RawMessage(e.Payload)}
	kind, st := string(e.Kind), e.StoreTime.UTC().Format(storeTimeLayout)
	ph, h, sig := hex.EncodeToString(e.PrevHash), hex.EncodeToString(e.Hash), hex.EncodeToString(e.Signature)
	if err := w.enc.Encode(jsonlEntry{World: &e.World, Position: &e.Position, Epoch: &e.Epoch, Kind: &kind,
		Holder: &e.Holder, Key: &e.Key, Payload: payload, StoreTime: &st, PrevHash: &ph, Hash: &h, Signature: &sig}); err != nil {
		return err
	}
	w.world, w.n, w.head = e.World, w.n+1, e.Hash
	return nil
}

// Close writes the end record: the world, the number of entries written
// and the last one's hash. It is the export's last line, written only
// after every entry, so a reader that finds it knows nothing was cut —
// also not at a line boundary, which no line-by-line check can see
// (SPEC §5). It writes nothing further; closing the underlying writer is
// the caller's.
func (w *Writer) Close() error {
	h := hex.EncodeToString(w.head)
	return w.enc.Encode(jsonlTrailer{End: &jsonlEnd{World: &w.world, Entries: &w.n, HeadHash: &h}})
}

// jsonlTrailer is the end record:
//
//	{"end":{"world":"w1","entries":30,"head_hash":"<64 hex>"}}
type jsonlTrailer struct {
	End *jsonlEnd `json:"end"`
}

type jsonlEnd struct {
	World    *string `json:"world"`
	Entries  *int64  `json:"entries"`
	HeadHash *string `json:"head_hash"`
}

// endPrefix is how the end record's line begins; no entry line can (an
// entry's first field is "world").
var endPrefix = []byte(`{"end":`)

// LineError is a JSONL line that could not be read as an entry: torn,
// malformed, missing a field or carrying an unknown one. It unwraps to
// lease.ErrCorrupt and names the 1-based line number.
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// Unwrap returns both the cause and lease.ErrCorrupt.
func (e *LineError) Unwrap() []error { return []error{e.Err, lease.ErrCorrupt} }

// Reader reads JSONL entries, one per line, refusing anything it cannot
// account for. It checks each line's form and the end record; chain and
// lease rules are the Auditor's.
type Reader struct {
	r     *bufio.Reader
	line  int
	world string
	n     int64
	head  []byte
	ended bool
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Line returns the number of the line last read.
func (r *Reader) Line() int { return r.line }

// Next returns the next entry; io.EOF once the end record was read, checked
// against what came before it, and nothing follows it; or a *LineError —
// also for an input that ends without its end record (cut off, even at a
// line boundary, or empty).
func (r *Reader) Next() (*Entry, error) {
	if r.ended {
		if _, err := r.readLine(); !errors.Is(err, io.EOF) {
			if err == nil {
				err = &LineError{Line: r.line, Err: errors.New("data after the end record")}
			}
			return nil, err
		}
		return nil, io.EOF
	}
	line, err := r.readLine()
	if errors.Is(err, io.EOF) {
		return nil, &LineError{Line: r.line + 1, Err: fmt.Errorf("%w: no end record after %d entries (the export was cut off)", ErrTornTail, r.n)}
	}
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(line, endPrefix) {
		if err := r.checkEnd(line); err != nil {
			return nil, &LineError{Line: r.line, Err: err}
		}
		r.ended = true
		return r.Next()
	}
	e, err := parseLine(line)
	if err != nil {
		return nil, &LineError{Line: r.line, Err: err}
	}
	if r.n > 0 && e.World != r.world {
		return nil, &LineError{Line: r.line, Err: fmt.Errorf("entry of world %q in an export of %q", e.World, r.world)}
	}
	r.world, r.n, r.head = e.World, r.n+1, e.Hash
	return e, nil
}

// ErrTornTail is an export that ends without its end record. It is wrapped
// in a *LineError, which matches lease.ErrCorrupt.
var ErrTornTail = errors.New("torn tail")

// checkEnd checks the end record against the entries read before it.
func (r *Reader) checkEnd(line []byte) error {
	var t jsonlTrailer
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&t); err != nil {
		return fmt.Errorf("malformed end record: %v", err)
	}
	if t.End == nil || t.End.World == nil || t.End.Entries == nil || t.End.HeadHash == nil {
		return errors.New("end record: want world, entries and head_hash")
	}
	if r.n == 0 {
		return errors.New("end record with no entries before it")
	}
	if *t.End.World != r.world || *t.End.Entries != r.n || *t.End.HeadHash != hex.EncodeToString(r.head) {
		return fmt.Errorf("%w: the end record says %d entries of %q ending in hash %.16s…, the file holds %d of %q ending in %.16s…",
			ErrTornTail, *t.End.Entries, *t.End.World, *t.End.HeadHash, r.n, r.world, hex.EncodeToString(r.head))
	}
	var canon bytes.Buffer
	w := Writer{enc: json.NewEncoder(&canon), world: r.world, n: r.n, head: r.head}
	w.enc.SetEscapeHTML(false)
	if err := w.Close(); err != nil {
		return err
	}
	if !bytes.Equal(bytes.TrimSuffix(canon.Bytes(), []byte("\n")), line) {
		return errors.New("end record is not in the canonical export form")
	}
	return nil
}

func (r *Reader) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxJSONLLine {
			r.line++
			return nil, &LineError{Line: r.line, Err: fmt.Errorf("line longer than %d bytes", MaxJSONLLine)}
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			r.line++
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(buf) == 0 {
				return nil, io.EOF
			}
			r.line++
			// Every exported line ends in "\n"; a last line without one was
			// cut off mid-write, even if what is left happens to parse.
			return nil, &LineError{Line: r.line, Err: errors.New("torn line: no terminating newline")}
		default:
			return nil, err
		}
	}
}

func parseLine(line []byte) (*Entry, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return nil, errors.New("empty line")
	}
	var j jsonlEntry
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return nil, fmt.Errorf("malformed entry: %v", err) // %v: a LineError must never match io.EOF
	}
	if d.More() {
		return nil, errors.New("trailing data after the entry")
	}
	missing := func(name string) error { return fmt.Errorf("missing field %q", name) }
	switch {
	case j.World == nil:
		return nil, missing("world")
	case j.Position == nil:
		return nil, missing("position")
	case j.Epoch == nil:
		return nil, missing("epoch")
	case j.Kind == nil:
		return nil, missing("kind")
	case j.Holder == nil:
		return nil, missing("holder")
	case j.Key == nil:
		return nil, missing("key")
	case !j.Payload.set:
		return nil, missing("payload")
	case j.StoreTime == nil:
		return nil, missing("store_time")
	case j.PrevHash == nil:
		return nil, missing("prev_hash")
	case j.Hash == nil:
		return nil, missing("hash")
	case j.Signature == nil:
		return nil, missing("signature")
	}
	e := &Entry{World: *j.World, Position: *j.Position, Epoch: *j.Epoch, Kind: Kind(*j.Kind),
		Holder: *j.Holder, Key: *j.Key, Payload: []byte(j.Payload.raw)}
	if e.Position <= 0 {
		return nil, fmt.Errorf("position %d is not positive", e.Position)
	}
	if e.Epoch < 0 {
		return nil, fmt.Errorf("epoch %d is negative", e.Epoch)
	}
	if norm, err := NormalizePayload(e.Payload); err != nil {
		return nil, err
	} else if !bytes.Equal(norm, e.Payload) {
		return nil, errors.New("payload is not in compact canonical form")
	}
	t, err := time.Parse(time.RFC3339Nano, *j.StoreTime)
	if err != nil {
		return nil, fmt.Errorf("store_time: %w", err)
	}
	if t.Nanosecond()%1000 != 0 {
		return nil, errors.New("store_time has sub-microsecond digits")
	}
	e.StoreTime = NormalizeTime(t)
	for _, f := range []struct {
		name string
		s    string
		dst  *[]byte
	}{{"prev_hash", *j.PrevHash, &e.PrevHash}, {"hash", *j.Hash, &e.Hash}, {"signature", *j.Signature, &e.Signature}} {
		b, err := hex.DecodeString(f.s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		if len(b) == 0 {
			b = nil
		}
		*f.dst = b
	}
	// The line must be exactly what Writer writes for this entry. JSON
	// readers forgive things (field-name case, upper-case hex, escapes) that
	// would let a changed byte pass unnoticed; the canonical line does not.
	var canon bytes.Buffer
	if err := NewWriter(&canon).Write(e); err != nil {
		return nil, err
	}
	if !bytes.Equal(bytes.TrimSuffix(canon.Bytes(), []byte("\n")), line) {
		return nil, errors.New("entry is not in the canonical export form")
	}
	return e, nil
}
