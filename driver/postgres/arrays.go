package postgres

import "github.com/jackc/pgx/v5/pgtype"

// refArray binds a slice as a one-dimensional array parameter without
// boxing its elements: Index hands pgx a pointer into the slice (an
// interface holding a pointer does not allocate), which pgx dereferences
// to encode; a nil []byte element still encodes as NULL. A [][]byte or
// []int64 passed as is goes through pgx's generic array path, which boxes
// every element into an interface — for a [][]byte by reflection, an
// allocation per element each time it is read: a completion batch's
// results cost three allocations per run that way.
type refArray[T any] []T

var _ pgtype.ArrayGetter = refArray[int64](nil)

// Dimensions implements pgtype.ArrayGetter (nil is a NULL array).
func (a refArray[T]) Dimensions() []pgtype.ArrayDimension {
	if a == nil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(len(a)), LowerBound: 1}}
}

// Index implements pgtype.ArrayGetter.
func (a refArray[T]) Index(i int) any { return &a[i] }

// IndexType implements pgtype.ArrayGetter.
func (a refArray[T]) IndexType() any { return new(T) }
