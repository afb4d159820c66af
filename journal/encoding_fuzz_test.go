package journal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzCanonical: the canonical encoding of any entry decodes back to exactly
// the fields it covers, with no byte left over. The layout is therefore
// unambiguous: two entries that differ in any covered field never share a
// hash preimage, however their strings are chosen (a world ending where a
// kind begins, empty fields, lengths that look like data). Hash and
// Signature are not covered, and of the store time only its Unix
// microsecond is.
func FuzzCanonical(f *testing.F) {
	f.Add("w1", int64(1), int64(1), "lease.granted", "home", "",
		[]byte(`{"holder":"home","epoch":1,"term_ms":30000,"granted_at_position":1}`), t0.UnixMicro(), []byte(nil))
	f.Add("", int64(0), int64(0), "", "", "", []byte(nil), int64(0), []byte{})
	f.Add("w\x00\x00\x00\x01", int64(-1), int64(1<<62), "k", "\xff", "key with spaces", []byte(`null`), int64(-1), bytes.Repeat([]byte{0xab}, 32))
	f.Add("leasehold/journal/v1\n", int64(9), int64(9), "\x00\x00\x00\x00", "", "\x00", []byte{0, 0, 0, 1}, int64(1)<<62, []byte{1})
	f.Fuzz(func(t *testing.T, world string, position, epoch int64, kind, holder, key string, payload []byte, micros int64, prev []byte) {
		e := Entry{World: world, Position: position, Epoch: epoch, Kind: Kind(kind), Holder: holder, Key: key,
			Payload: payload, StoreTime: time.UnixMicro(micros).UTC(), PrevHash: prev,
			Hash: []byte("not covered"), Signature: []byte("not covered either")}
		b := Canonical(&e)

		got, err := decodeCanonical(b)
		require.NoError(t, err, "canonical bytes %x", b)
		require.Equal(t, canonicalFields{world, position, epoch, kind, holder, key, micros, nil, nil},
			canonicalFields{got.World, got.Position, got.Epoch, got.Kind, got.Holder, got.Key, got.StoreMicros, nil, nil})
		require.True(t, bytes.Equal(prev, got.PrevHash), "prev_hash %x decoded as %x", prev, got.PrevHash)
		require.True(t, bytes.Equal(payload, got.Payload), "payload %x decoded as %x", payload, got.Payload)

		// Hash, Signature, the zone and the sub-microsecond part of the
		// store time are outside the encoding.
		other := e
		other.Hash, other.Signature = nil, []byte("another signature")
		other.StoreTime = e.StoreTime.In(time.FixedZone("UTC+1", 3600)).Add(999 * time.Nanosecond)
		if other.StoreTime.UnixMicro() == micros { // not at the very top of the range
			require.Equal(t, b, Canonical(&other))
		}

		Seal(&e)
		require.True(t, HashValid(&e))
		require.Len(t, e.Hash, 32)
	})
}

// canonicalFields are the fields Canonical covers, as decodeCanonical reads
// them back.
type canonicalFields struct {
	World             string
	Position, Epoch   int64
	Kind, Holder, Key string
	StoreMicros       int64
	PrevHash, Payload []byte
}

// decodeCanonical reads the layout documented on Canonical, independently
// of the encoder, and refuses any byte it cannot account for.
func decodeCanonical(b []byte) (canonicalFields, error) {
	var out canonicalFields
	if !bytes.HasPrefix(b, []byte(canonicalDomain)) {
		return out, errors.New("no domain separator")
	}
	b = b[len(canonicalDomain):]
	bad := errors.New("short encoding")
	u64 := func() (int64, error) {
		if len(b) < 8 {
			return 0, bad
		}
		v := int64(binary.BigEndian.Uint64(b))
		b = b[8:]
		return v, nil
	}
	field := func() ([]byte, error) {
		if len(b) < 4 {
			return nil, bad
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(len(b)) < uint64(n) {
			return nil, bad
		}
		v := b[:n:n]
		b = b[n:]
		return v, nil
	}
	var err error
	var w, k, h, key, prev, payload []byte
	steps := []func() error{
		func() (err error) { w, err = field(); return },
		func() (err error) { out.Position, err = u64(); return },
		func() (err error) { out.Epoch, err = u64(); return },
		func() (err error) { k, err = field(); return },
		func() (err error) { h, err = field(); return },
		func() (err error) { key, err = field(); return },
		func() (err error) { out.StoreMicros, err = u64(); return },
		func() (err error) { prev, err = field(); return },
		func() (err error) { payload, err = field(); return },
	}
	for _, step := range steps {
		if err = step(); err != nil {
			return out, err
		}
	}
	if len(b) != 0 {
		return out, errors.New("trailing bytes")
	}
	out.World, out.Kind, out.Holder, out.Key = string(w), string(k), string(h), string(key)
	out.PrevHash, out.Payload = prev, payload
	return out, nil
}
