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
// record i being no*blockSize+i+1. Like every memdb object it is never
// changed once inserted: a write copies it. A full block of a table with a
// codec holds its records packed; any other holds pointers to them.
//
// Only a table's last block can be short of full, and it is the one that
// every create rewrites. It is the table's open block: its key is openKey,
// one byte, not its number (see blockIndexer), so that rewriting it copies
// the tree's root and no more, where a path down to a block number copies
// a node for each of its nibbles. When it fills, it moves under its number,
// once every blockSize creates, and is filed in its postings lists.
type block[T any] struct {
	no     uint64
	recs   []*T
	packed packed
}

// size is how many records the block holds.
func (b *block[T]) size() int {
	if b.packed.words != nil {
		return blockSize
	}
	return len(b.recs)
}

// full reports whether the block holds all its blockSize records, which
// makes it a numbered block, filed in its postings lists, rather than the
// open one.
func (b *block[T]) full() bool { return b.size() == blockSize }

// newBlock makes the block of recs, packed if it is full and the table has a
// codec.
func newBlock[T, F any](t table[T, F], no uint64, recs []*T) (*block[T], error) {
	if len(recs) < blockSize || t.codec == nil {
		return &block[T]{no: no, recs: recs}, nil
	}
	p, err := t.codec.packAll(recs)
	if err != nil {
		return nil, fmt.Errorf("pack %s block %d: %w", t.name, no, err)
	}
	return &block[T]{no: no, packed: p}, nil
}

// record returns the block's record i.
func record[T, F any](t table[T, F], b *block[T], i int) T {
	if b.packed.words != nil {
		return t.codec.unpackAt(b.packed, i)
	}
	return *b.recs[i]
}

// pointers returns the block's records as pointers: its own if it holds
// them so, or copies of the packed ones.
func pointers[T, F any](t table[T, F], b *block[T]) []*T {
	if b.packed.words == nil {
		return b.recs
	}
	recs := make([]*T, blockSize)
	for i := range recs {
		rec := t.codec.unpackAt(b.packed, i)
		recs[i] = &rec
	}
	return recs
}

func blockOf(seq uint64) (no uint64, i int) {
	return (seq - 1) / blockSize, int((seq - 1) % blockSize)
}

// openKey is the open block's key: above every block number's key, whose
// bytes are nibbles, so that the open block is also the table's last entry.
var openKey = []byte{0x10}

// openBlock is the argument that asks a record table's index for its open
// block.
type openBlock struct{}

// blockIndexer keys a full block by its number and the open block by
// openKey.
type blockIndexer[T any] struct{}

func (blockIndexer[T]) FromObject(raw any) (bool, []byte, error) {
	b := raw.(*block[T])
	if !b.full() {
		return true, openKey, nil
	}
	return true, seqKey(make([]byte, 0, 16), b.no), nil
}

func (blockIndexer[T]) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("block index takes one argument, got %d", len(args))
	}
	switch arg := args[0].(type) {
	case uint64:
		return seqKey(make([]byte, 0, 16), arg), nil
	case openBlock:
		return openKey, nil
	}
	return nil, fmt.Errorf("block index takes a uint64 or openBlock, got %T", args[0])
}

// PrefixFromArgs with no argument is the whole table, for Get.
func (x blockIndexer[T]) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) == 0 {
		return nil, nil
	}
	return x.FromArgs(args...)
}

// blockAt returns the block numbered no, open or full; nil if there is none.
func blockAt[T, F any](txn *memdb.Txn, t table[T, F], no uint64) (*block[T], error) {
	// The open block first: it holds the newest records, which clients
	// read most, and every record of an account that has written fewer
	// than a block's worth, which one lookup then finds.
	b, err := openBlockIfAt(txn, t, no)
	if err != nil || b != nil {
		return b, err
	}
	return fullBlockAt(txn, t, no)
}

// fullBlockAt returns the full block numbered no, nil if there is none.
func fullBlockAt[T, F any](txn *memdb.Txn, t table[T, F], no uint64) (*block[T], error) {
	raw, err := txn.First(t.name, indexID, no)
	if err != nil {
		return nil, fmt.Errorf("look up %s block %d: %w", t.name, no, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*block[T]), nil
}

// openBlockIfAt returns the table's open block if it is numbered no.
func openBlockIfAt[T, F any](txn *memdb.Txn, t table[T, F], no uint64) (*block[T], error) {
	open, err := openBlockOf[T](txn, t.name)
	if err != nil || open == nil || open.no != no {
		return nil, err
	}
	return open, nil
}

// openBlockOf returns the table's open block, nil if it has none.
func openBlockOf[T any](txn *memdb.Txn, table string) (*block[T], error) {
	raw, err := txn.First(table, indexID, openBlock{})
	if err != nil {
		return nil, fmt.Errorf("look up the open %s block: %w", table, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*block[T]), nil
}

// lookup returns the record with the sequence number; false if there is
// none.
func lookup[T, F any](txn *memdb.Txn, t table[T, F], seq uint64) (T, bool, error) {
	var none T
	if seq == 0 {
		return none, false, nil
	}
	no, i := blockOf(seq)
	b, err := blockAt(txn, t, no)
	if err != nil || b == nil || i >= b.size() {
		return none, false, err
	}
	return record(t, b, i), true, nil
}

// lastBlock returns the table's block with the highest number, nil when the
// table is empty: the open block if there is one, which is one exact
// lookup, where finding the last key walks an iterator down the tree.
func lastBlock[T, F any](txn *memdb.Txn, t table[T, F]) (*block[T], error) {
	if open, err := openBlockOf[T](txn, t.name); err != nil || open != nil {
		return open, err
	}
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
	return b.no*blockSize + uint64(b.size()), nil
}

// put stores rec, as the table's next record or in place of the record with
// its sequence number, and returns the block that now holds it and that
// block's records.
func put[T, F any](txn *memdb.Txn, t table[T, F], rec *T) (*block[T], []*T, error) {
	no, i := blockOf(t.seq(rec))
	// Most writes are creates, into the open block.
	was, err := openBlockIfAt(txn, t, no)
	if err == nil && was == nil {
		was, err = fullBlockAt(txn, t, no)
	}
	if err != nil {
		return nil, nil, err
	}
	var old []*T
	if was != nil {
		old = pointers(t, was)
	}
	if i > len(old) {
		return nil, nil, fmt.Errorf("%s %d would leave a gap after %d", t.name, t.seq(rec), len(old))
	}
	recs := make([]*T, max(len(old), i+1))
	copy(recs, old)
	recs[i] = rec
	b, err := newBlock(t, no, recs)
	if err != nil {
		return nil, nil, err
	}
	// The open block that fills leaves its key for its number's.
	if was != nil && !was.full() && b.full() {
		if err := txn.Delete(t.name, was); err != nil {
			return nil, nil, fmt.Errorf("close %s block %d: %w", t.name, no, err)
		}
	}
	if err := txn.Insert(t.name, b); err != nil {
		return nil, nil, fmt.Errorf("store %s %d: %w", t.name, t.seq(rec), err)
	}
	return b, recs, nil
}

// dropFullBlock deletes a full block, if it is there.
func dropFullBlock[T, F any](txn *memdb.Txn, t table[T, F], no uint64) error {
	b, err := fullBlockAt(txn, t, no)
	if err != nil || b == nil {
		return err
	}
	if err := txn.Delete(t.name, b); err != nil {
		return fmt.Errorf("drop %s block %d: %w", t.name, no, err)
	}
	return nil
}

// blockCursor walks a table's records from the newest down, reading each
// block once.
type blockCursor[T, F any] struct {
	txn *memdb.Txn
	t   table[T, F]
	b   *block[T]
	// open is the table's open block, once looked for.
	open   *block[T]
	looked bool
}

// seek returns the highest sequence number at most max that the table
// holds; false when there is none.
func (c *blockCursor[T, F]) seek(max uint64) (uint64, bool, error) {
	if max == 0 {
		return 0, false, nil
	}
	if no, _ := blockOf(max); c.b == nil || c.b.no != no {
		b, err := c.atMost(no)
		if err != nil || b == nil {
			return 0, false, err
		}
		c.b = b
	}
	return min(max, c.b.no*blockSize+uint64(c.b.size())), true, nil
}

// openBlock returns the table's open block, nil if it has none, reading it
// once.
func (c *blockCursor[T, F]) openBlock() (*block[T], error) {
	if !c.looked {
		open, err := openBlockOf[T](c.txn, c.t.name)
		if err != nil {
			return nil, err
		}
		c.open, c.looked = open, true
	}
	return c.open, nil
}

// atMost returns the block with the highest number at most no, nil if there
// is none. The open block, if any, has the highest number of all.
func (c *blockCursor[T, F]) atMost(no uint64) (*block[T], error) {
	open, err := c.openBlock()
	if err != nil {
		return nil, err
	}
	if open != nil && open.no <= no {
		return open, nil
	}
	it, err := c.txn.ReverseLowerBound(c.t.name, indexID, no)
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", c.t.name, err)
	}
	raw := it.Next()
	if raw == nil {
		return nil, nil
	}
	return raw.(*block[T]), nil
}

// at returns the record with the sequence number; false if there is none.
func (c *blockCursor[T, F]) at(seq uint64) (T, bool, error) {
	var none T
	got, ok, err := c.seek(seq)
	if err != nil || !ok || got != seq {
		return none, false, err
	}
	return record(c.t, c.b, int(seq-1-c.b.no*blockSize)), true, nil
}
