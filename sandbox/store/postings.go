package store

import (
	"context"
	"fmt"
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

// addPosting files seq under list.
func addPosting(txn *memdb.Txn, list string, seq uint64) error {
	p, err := chunkAt(txn, list, seq)
	if err != nil {
		return err
	}
	var chunks []*postings
	switch i, found := slices.BinarySearch(p.seqsOrNil(), seq); {
	case found:
		return nil
	case p == nil || (len(p.seqs) == chunkSize && i == chunkSize):
		chunks = []*postings{{list: list, first: seq, seqs: []uint64{seq}}}
	default:
		seqs := make([]uint64, len(p.seqs)+1)
		copy(seqs, p.seqs[:i])
		seqs[i] = seq
		copy(seqs[i+1:], p.seqs[i:])
		if len(seqs) <= chunkSize {
			chunks = []*postings{{list: p.list, first: p.first, seqs: seqs}}
		} else {
			half := len(seqs) / 2
			chunks = []*postings{{list: p.list, first: seqs[0], seqs: seqs[:half:half]}, {list: p.list, first: seqs[half], seqs: seqs[half:]}}
		}
	}
	for _, c := range chunks {
		if err := txn.Insert(postingsTable, c); err != nil {
			return fmt.Errorf("file %d under %q: %w", seq, list, err)
		}
	}
	return nil
}

func (p *postings) seqsOrNil() []uint64 {
	if p == nil {
		return nil
	}
	return p.seqs
}

// removePosting takes seq out of list.
func removePosting(txn *memdb.Txn, list string, seq uint64) error {
	p, err := chunkAt(txn, list, seq)
	if err != nil {
		return err
	}
	i, found := slices.BinarySearch(p.seqsOrNil(), seq)
	if !found {
		return fmt.Errorf("%d is not filed under %q", seq, list)
	}
	// The chunk's key is its first seq: when that goes, so does the key.
	if i == 0 || len(p.seqs) == 1 {
		if err := txn.Delete(postingsTable, p); err != nil {
			return fmt.Errorf("unfile %d from %q: %w", seq, list, err)
		}
		if len(p.seqs) == 1 {
			return nil
		}
	}
	seqs := slices.Delete(slices.Clone(p.seqs), i, i+1)
	if err := txn.Insert(postingsTable, &postings{list: p.list, first: seqs[0], seqs: seqs}); err != nil {
		return fmt.Errorf("unfile %d from %q: %w", seq, list, err)
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
