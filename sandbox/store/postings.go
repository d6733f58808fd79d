package store

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hashicorp/go-memdb"
)

// chunkSize bounds the sequence numbers one postings object holds. A list
// written in record order fills its chunks to the brim; one that a change
// inserts into the middle of a full chunk splits it in two.
const chunkSize = 64

// postings is one chunk of a postings list: the ascending sequence numbers
// of the records that file under one filter value (say, the bugs whose
// status is new), from first on. Its key is (list, first), so a list's
// chunks are one range of the index, in record order, and a filtered page
// is a walk down that range: it costs its own length, never a scan. A list
// costs about 8 bytes a record, where an index entry a record would cost
// some 350.
type postings struct {
	list  string
	first uint64
	seqs  []uint64
}

// chunkAt returns the chunk of list that holds, or would hold, seq: the one
// with the greatest first at most seq; nil if there is none.
func chunkAt(txn *memdb.Txn, list string, seq uint64) (*postings, error) {
	it, err := txn.ReverseLowerBound(postingsTable, indexID, list, seq)
	if err != nil {
		return nil, fmt.Errorf("find postings of %q: %w", list, err)
	}
	raw := it.Next()
	if raw == nil || raw.(*postings).list != list {
		return nil, nil
	}
	return raw.(*postings), nil
}

// posting is one record's move into, or out of, one postings list.
type posting struct {
	list   string
	seq    uint64
	remove bool
}

// refile makes every move in moves. It reads every chunk the moves touch
// before it writes any: memdb forgets which tree nodes a write transaction
// has already copied whenever that transaction reads a table it has written
// (readableIndex clones the radix transaction), so a read between two
// writes makes the second copy the tree's top again, with a fresh node
// cache. Moves name distinct lists, as each filter value has its own.
func refile(w *writeTxn, moves []posting) error {
	var buf [8]chunkEdit
	edits := buf[:0]
	for _, m := range moves {
		p, err := chunkAt(w.Txn, m.list, m.seq)
		if err != nil {
			return err
		}
		e, err := m.edit(p)
		if err != nil {
			return err
		}
		edits = append(edits, e)
	}
	for _, e := range edits {
		if e.drop != nil {
			if err := w.Delete(postingsTable, e.drop); err != nil {
				return fmt.Errorf("unfile from %q: %w", e.drop.list, err)
			}
		}
		for _, c := range e.put {
			if c == nil {
				continue
			}
			if err := w.Insert(postingsTable, c); err != nil {
				return fmt.Errorf("file under %q: %w", c.list, err)
			}
		}
		w.cost += int64(e.chunks) * chunkBytes
	}
	return nil
}

// chunkEdit is what one move does to its chunk: the chunk to delete, when
// its key (its first seq) goes, the chunks that take its place, and how many
// chunks the list gains (or, negative, loses).
type chunkEdit struct {
	drop   *postings
	put    [2]*postings
	chunks int
}

// edit works out the move against p, the chunk that holds or would hold
// its seq (nil if there is none).
func (m posting) edit(p *postings) (chunkEdit, error) {
	i, found := slices.BinarySearch(p.seqsOrNil(), m.seq)
	if m.remove {
		if !found {
			return chunkEdit{}, fmt.Errorf("%d is not filed under %q", m.seq, m.list)
		}
		if len(p.seqs) == 1 {
			return chunkEdit{drop: p, chunks: -1}, nil
		}
		seqs := slices.Delete(slices.Clone(p.seqs), i, i+1)
		e := chunkEdit{put: [2]*postings{{list: p.list, first: seqs[0], seqs: seqs}}}
		// The chunk's key is its first seq: when that goes, so does the key.
		if i == 0 {
			e.drop = p
		}
		return e, nil
	}
	switch {
	case found:
		return chunkEdit{}, nil
	case p == nil || (len(p.seqs) == chunkSize && i == chunkSize):
		return chunkEdit{put: [2]*postings{{list: m.list, first: m.seq, seqs: []uint64{m.seq}}}, chunks: 1}, nil
	}
	seqs := make([]uint64, len(p.seqs)+1)
	copy(seqs, p.seqs[:i])
	seqs[i] = m.seq
	copy(seqs[i+1:], p.seqs[i:])
	if len(seqs) <= chunkSize {
		return chunkEdit{put: [2]*postings{{list: p.list, first: p.first, seqs: seqs}}}, nil
	}
	half := len(seqs) / 2
	return chunkEdit{put: [2]*postings{{list: p.list, first: seqs[0], seqs: seqs[:half:half]}, {list: p.list, first: seqs[half], seqs: seqs[half:]}}, chunks: 1}, nil
}

func (p *postings) seqsOrNil() []uint64 {
	if p == nil {
		return nil
	}
	return p.seqs
}

// fileBlock files the records of a block that has just filled. Until then,
// while it is its table's open block, its records are filed nowhere, and a
// filtered list looks at them itself (filterCursor). So a create does not
// copy a path of the postings tree for each list it files under, and a list
// takes a block's records in one write.
func fileBlock[T, F any](w *writeTxn, t table[T, F], recs []*T) error {
	lists, seqs := postingsOf(t, recs)
	return appendPostings(w, lists, seqs)
}

// postingsOf returns the postings lists that recs, in ascending order, file
// under, in the order first met, and each list's sequence numbers.
func postingsOf[T, F any](t table[T, F], recs []*T) ([]string, map[string][]uint64) {
	var (
		lists []string
		seqs  = map[string][]uint64{}
		buf   [4]string
	)
	for _, rec := range recs {
		for _, f := range t.filters {
			for _, v := range f.values(buf[:0], rec) {
				list := f.list(t, v)
				got, ok := seqs[list]
				if !ok {
					lists = append(lists, list)
				}
				// A value given twice (a platform) is filed once.
				if len(got) == 0 || got[len(got)-1] != t.seq(rec) {
					seqs[list] = append(got, t.seq(rec))
				}
			}
		}
	}
	return lists, seqs
}

// appendPostings adds each list's seqs, all above any it holds, to its end:
// the last chunk fills up to chunkSize and new chunks take the rest, so a
// list written in order is full chunks. It reads every last chunk before it
// writes any (see refile).
func appendPostings(w *writeTxn, lists []string, seqs map[string][]uint64) error {
	lasts := make([]*postings, len(lists))
	for i, list := range lists {
		p, err := chunkAt(w.Txn, list, math.MaxUint64)
		if err != nil {
			return err
		}
		if p != nil && p.seqs[len(p.seqs)-1] >= seqs[list][0] {
			return fmt.Errorf("%d filed under %q after %d", seqs[list][0], list, p.seqs[len(p.seqs)-1])
		}
		lasts[i] = p
	}
	for i, list := range lists {
		add := seqs[list]
		if p := lasts[i]; p != nil && len(p.seqs) < chunkSize {
			n := min(chunkSize-len(p.seqs), len(add))
			filled := &postings{list: list, first: p.first, seqs: append(p.seqs[:len(p.seqs):len(p.seqs)], add[:n]...)}
			if err := w.Insert(postingsTable, filled); err != nil {
				return fmt.Errorf("file under %q: %w", list, err)
			}
			add = add[n:]
		}
		for first := 0; first < len(add); first += chunkSize {
			end := min(first+chunkSize, len(add))
			if err := w.Insert(postingsTable, &postings{list: list, first: add[first], seqs: add[first:end:end]}); err != nil {
				return fmt.Errorf("file under %q: %w", list, err)
			}
			w.cost += chunkBytes
		}
	}
	return nil
}

// seeker finds, in some ordered set of sequence numbers, the highest one at
// most max; false when there is none.
type seeker interface {
	seek(max uint64) (uint64, bool, error)
}

// postingsCursor walks one postings list from the newest down.
type postingsCursor struct {
	txn   *memdb.Txn
	list  string
	chunk *postings
}

func (c *postingsCursor) seek(max uint64) (uint64, bool, error) {
	if c.chunk == nil || c.chunk.first > max {
		p, err := chunkAt(c.txn, c.list, max)
		if err != nil || p == nil {
			return 0, false, err
		}
		c.chunk = p
	}
	i, found := slices.BinarySearch(c.chunk.seqs, max)
	if !found {
		i--
	}
	return c.chunk.seqs[i], true, nil
}

// filterCursor walks the records that file under one filter value, newest
// first: those of the table's open block, which are not filed yet, by
// looking at each, and the others through the value's postings list.
type filterCursor[T, F any] struct {
	open   *block[T]
	filter filter[T, F]
	value  string
	filed  postingsCursor
}

// filterCursors returns a cursor for each filter that f sets, none when it
// sets none; records is the table's cursor, whose open block they share.
func filterCursors[T, F any](records *blockCursor[T, F], f F) ([]seeker, error) {
	var seekers []seeker
	for _, fl := range records.t.filters {
		v := fl.value(f)
		if v == "" {
			continue
		}
		open, err := records.openBlock()
		if err != nil {
			return nil, err
		}
		seekers = append(seekers, &filterCursor[T, F]{open: open, filter: fl, value: v, filed: postingsCursor{txn: records.txn, list: fl.list(records.t, v)}})
	}
	return seekers, nil
}

func (c *filterCursor[T, F]) seek(max uint64) (uint64, bool, error) {
	if c.open != nil {
		first := c.open.no*blockSize + 1
		var buf [4]string
		for seq := min(max, first+uint64(len(c.open.recs))-1); seq >= first; seq-- {
			if slices.Contains(c.filter.values(buf[:0], c.open.recs[seq-first]), c.value) {
				return seq, true, nil
			}
		}
		max = min(max, first-1)
	}
	if max == 0 {
		return 0, false, nil
	}
	return c.filed.seek(max)
}

// ctxCheckEvery is how many steps a read takes between looks at whether its
// caller has gone.
const ctxCheckEvery = 256

// seekAll returns the highest sequence number at most max that every seeker
// holds. Each seeker in turn skips down to the candidate, and whichever
// lands lower makes the new candidate (a leapfrog join), so a step skips a
// whole run of records that one list lacks.
func seekAll(ctx context.Context, seekers []seeker, max uint64) (uint64, bool, error) {
	for steps := 1; ; steps++ {
		if steps%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, false, err
			}
		}
		agreed := true
		for _, s := range seekers {
			seq, ok, err := s.seek(max)
			if err != nil || !ok {
				return 0, false, err
			}
			if seq != max {
				max, agreed = seq, false
			}
		}
		if agreed {
			return max, true, nil
		}
	}
}
