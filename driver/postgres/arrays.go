package postgres

import "github.com/jackc/pgx/v5/pgtype"

// int8Array and byteaArray bind a []int64 and a [][]byte as array
// parameters without an allocation per element. Passed as is, pgx's
// generic array path boxes every element into an interface — for a
// [][]byte by reflection, a 24-byte allocation each time an element is
// read, three per element — and a pointer into the slice fares no
// better (pgx dereferences it by reflection, boxing the element again).
// Here Index hands pgx a pointer to the element under a type that
// implements pgx's own valuer interface, which pgx calls without
// reflection; an interface holding a pointer allocates nothing. A nil
// []byte element still encodes as NULL.
type (
	int8Array  []int64
	byteaArray [][]byte
	int8Ref    int64
	byteaRef   []byte
)

var (
	_ pgtype.ArrayGetter = int8Array(nil)
	_ pgtype.ArrayGetter = byteaArray(nil)
	_ pgtype.Int64Valuer = (*int8Ref)(nil)
	_ pgtype.BytesValuer = (*byteaRef)(nil)
)

// dims is a one-dimensional array's dimensions (nil: a NULL array).
func dims(n int, null bool) []pgtype.ArrayDimension {
	if null {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(n), LowerBound: 1}}
}

func (a int8Array) Dimensions() []pgtype.ArrayDimension { return dims(len(a), a == nil) }
func (a int8Array) Index(i int) any                     { return (*int8Ref)(&a[i]) }
func (a int8Array) IndexType() any                      { return new(int8Ref) }

func (a byteaArray) Dimensions() []pgtype.ArrayDimension { return dims(len(a), a == nil) }
func (a byteaArray) Index(i int) any                     { return (*byteaRef)(&a[i]) }
func (a byteaArray) IndexType() any                      { return new(byteaRef) }

func (v *int8Ref) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(*v), Valid: true}, nil
}
func (v *byteaRef) BytesValue() ([]byte, error) { return *v, nil }
