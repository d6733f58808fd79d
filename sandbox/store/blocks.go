package store

import (
	"fmt"

	"github.com/hashicorp/go-memdb"
)

// blockSize is how many consecutive records one memdb object holds. A
// radix-tree entry costs about 350 bytes whatever it holds (go-immutable-radix
// gives every node and leaf a channel of its own), more than a record
// itself; a block pays it once for 32 records, and its copy on write is 32
// pointers.
const blockSize = 32

// block holds the records with sequence numbers no*blockSize+1 onwards,
// recs[i] being no*blockSize+i+1. Like every memdb object it is never
// changed once inserted: a write copies it.
type block[T any] struct {
	no   uint64
	recs []*T
}

func blockOf(seq uint64) (no uint64, i int) {
	return (seq - 1) / blockSize, int((seq - 1) % blockSize)
}

// lookup returns the record with the sequence number, nil if there is none.
func lookup[T, F any](txn *memdb.Txn, t table[T, F], seq uint64) (*T, error) {
	if seq == 0 {
		return nil, nil
	}
	no, i := blockOf(seq)
	raw, err := txn.First(t.name, indexID, no)
	if err != nil {
		return nil, fmt.Errorf("look up %s block %d: %w", t.name, no, err)
	}
	if raw == nil || i >= len(raw.(*block[T]).recs) {
		return nil, nil
	}
	return raw.(*block[T]).recs[i], nil
}

// lastBlock returns the table's block with the highest number, nil when the
// table is empty.
func lastBlock[T, F any](txn *memdb.Txn, t table[T, F]) (*block[T], error) {
	raw, err := txn.Last(t.name, indexID)
	if err != nil {
		return nil, fmt.Errorf("read last %s: %w", t.name, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*block[T]), nil
}

// lastSeq returns the table's highest sequence number, 0 when it is empty.
// Records are never deleted from the top, so it is also the last one used.
func lastSeq[T, F any](txn *memdb.Txn, t table[T, F]) (uint64, error) {
	b, err := lastBlock(txn, t)
	if err != nil || b == nil {
		return 0, err
	}
	return b.no*blockSize + uint64(len(b.recs)), nil
}

// put stores rec, as the table's next record or in place of the record with
// its sequence number, and returns the block that now holds it.
func put[T, F any](txn *memdb.Txn, t table[T, F], rec *T) (*block[T], error) {
	no, i := blockOf(t.seq(rec))
	raw, err := txn.First(t.name, indexID, no)
	if err != nil {
		return nil, fmt.Errorf("look up %s block %d: %w", t.name, no, err)
	}
	var old []*T
	if raw != nil {
		old = raw.(*block[T]).recs
	}
	if i > len(old) {
		return nil, fmt.Errorf("%s %d would leave a gap after %d", t.name, t.seq(rec), len(old))
	}
	recs := make([]*T, max(len(old), i+1))
	copy(recs, old)
	recs[i] = rec
	b := &block[T]{no: no, recs: recs}
	if err := txn.Insert(t.name, b); err != nil {
		return nil, fmt.Errorf("store %s %d: %w", t.name, t.seq(rec), err)
	}
	return b, nil
}

// filed reports whether the block's records are in their postings lists:
// a block is filed once it is full (see fileBlock).
func (b *block[T]) filed() bool { return len(b.recs) == blockSize }

// dropBlock deletes a whole block, if it is there.
func dropBlock[T, F any](txn *memdb.Txn, t table[T, F], no uint64) error {
	if err := txn.Delete(t.name, &block[T]{no: no}); err != nil && err != memdb.ErrNotFound {
		return fmt.Errorf("drop %s block %d: %w", t.name, no, err)
	}
	return nil
}

// blockCursor walks a table's records from the newest down, reading each
// block once.
type blockCursor[T any] struct {
	txn   *memdb.Txn
	table string
	b     *block[T]
}

// seek returns the highest sequence number at most max that the table
// holds; false when there is none.
func (c *blockCursor[T]) seek(max uint64) (uint64, bool, error) {
	if max == 0 {
		return 0, false, nil
	}
	if no, _ := blockOf(max); c.b == nil || c.b.no != no {
		it, err := c.txn.ReverseLowerBound(c.table, indexID, no)
		if err != nil {
			return 0, false, fmt.Errorf("walk %s: %w", c.table, err)
		}
		raw := it.Next()
		if raw == nil {
			return 0, false, nil
		}
		c.b = raw.(*block[T])
	}
	return min(max, c.b.no*blockSize+uint64(len(c.b.recs))), true, nil
}

// at returns the record with the sequence number, nil if there is none.
func (c *blockCursor[T]) at(seq uint64) (*T, error) {
	got, ok, err := c.seek(seq)
	if err != nil || !ok || got != seq {
		return nil, err
	}
	return c.b.recs[seq-1-c.b.no*blockSize], nil
}
