package store

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// indexID is every table's primary index: the record's sequence number,
// which its ID also carries ("cmp_000042"), so one eight-byte key serves
// lookups by ID, newest-first pages and the next ID.
const indexID = "id"

// table describes one kind of record: how memdb stores and indexes it, and
// which of its list filters walk an index of their own. It is the one place
// that says so; the schema and the list queries are both built from it.
type table[T, F any] struct {
	name string
	// kind prefixes the record's IDs.
	kind string
	seq  func(*T) uint64
	// shift moves every time of the record by d: records hold times
	// relative to their account's origin (see DB).
	shift func(rec *T, d sandbox.Time)
	match func(F, *T) bool
	// indexes are the filters that have an index, most selective first; a
	// list uses the first one its filter sets and checks the other
	// filters while walking it. Low-cardinality fields have none: their
	// values are dense enough that a walk of the primary index fills a
	// page quickly, and every index costs each write a tree update.
	indexes []filterIndex[T, F]
}

// filterIndex is an index on (field, seq), for one list filter.
type filterIndex[T, F any] struct {
	name   string
	field  func(*T) string
	filter func(F) string
}

func (t table[T, F]) schema() *memdb.TableSchema {
	ts := &memdb.TableSchema{Name: t.name, Indexes: map[string]*memdb.IndexSchema{
		indexID: {Name: indexID, Unique: true, Indexer: seqIndexer[T]{t.seq}},
	}}
	for _, ix := range t.indexes {
		// Unique because the key ends in the seq: memdb then does not
		// append the primary key, and the keys stay short.
		ts.Indexes[ix.name] = &memdb.IndexSchema{Name: ix.name, Unique: true, Indexer: fieldSeqIndexer[T]{ix.field, t.seq}}
	}
	return ts
}

var (
	campaigns = table[sandbox.Campaign, sandbox.CampaignFilter]{
		name: "campaigns", kind: "cmp",
		seq:   func(c *sandbox.Campaign) uint64 { return c.Seq },
		shift: func(c *sandbox.Campaign, d sandbox.Time) { c.CreatedAt += d },
		match: sandbox.CampaignFilter.Match,
	}
	bugs = table[sandbox.Bug, sandbox.BugFilter]{
		name: "bugs", kind: "bug",
		seq:   func(b *sandbox.Bug) uint64 { return b.Seq },
		shift: func(b *sandbox.Bug, d sandbox.Time) { b.CreatedAt += d; b.UpdatedAt += d },
		match: sandbox.BugFilter.Match,
		indexes: []filterIndex[sandbox.Bug, sandbox.BugFilter]{
			{name: "campaign", field: func(b *sandbox.Bug) string { return b.CampaignID }, filter: func(f sandbox.BugFilter) string { return f.CampaignID }},
		},
	}
	testers = table[sandbox.Tester, sandbox.TesterFilter]{
		name: "testers", kind: "tst",
		seq:   func(t *sandbox.Tester) uint64 { return t.Seq },
		shift: func(t *sandbox.Tester, d sandbox.Time) { t.CreatedAt += d },
		match: sandbox.TesterFilter.Match,
	}
	webhooks = table[sandbox.Webhook, struct{}]{
		name: "webhooks", kind: "whk",
		seq:   func(w *sandbox.Webhook) uint64 { return w.Seq },
		shift: func(w *sandbox.Webhook, d sandbox.Time) { w.CreatedAt += d },
	}
	// events hold their JSON with absolute times, encoded when they
	// happened, so there is nothing to shift.
	events = table[sandbox.Event, eventsAfter]{
		name: "events", kind: "evt",
		seq:   func(e *sandbox.Event) uint64 { return e.Seq },
		shift: func(*sandbox.Event, sandbox.Time) {},
		match: func(after eventsAfter, e *sandbox.Event) bool { return e.Seq > uint64(after) },
	}
)

// eventsAfter hides the events that are past the account's limit but not yet
// pruned.
type eventsAfter uint64

func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		campaigns.name: campaigns.schema(),
		bugs.name:      bugs.schema(),
		testers.name:   testers.schema(),
		webhooks.name:  webhooks.schema(),
		events.name:    events.schema(),
	}}
}

// seqKey appends the index key of a sequence number: its sixteen hex
// nibbles, one byte each, most significant first, so that keys sort as the
// numbers do. Not the eight bytes themselves: the radix tree copies a node's
// whole edge list on every insert below it, and a byte fans out to 256
// edges (4 KiB a copy) where a nibble fans out to 16.
func seqKey(b []byte, seq uint64) []byte {
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, byte(seq>>shift)&0xf)
	}
	return b
}

// seqIndexer indexes records by sequence number, without the reflection
// memdb's field indexers use on every insert.
type seqIndexer[T any] struct{ seq func(*T) uint64 }

func (x seqIndexer[T]) FromObject(raw any) (bool, []byte, error) {
	return true, seqKey(make([]byte, 0, 16), x.seq(raw.(*T))), nil
}

func (x seqIndexer[T]) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("seq index takes one argument, got %d", len(args))
	}
	seq, ok := args[0].(uint64)
	if !ok {
		return nil, fmt.Errorf("seq index takes a uint64, got %T", args[0])
	}
	return seqKey(make([]byte, 0, 16), seq), nil
}

// PrefixFromArgs with no argument is the whole table, for Get.
func (x seqIndexer[T]) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) == 0 {
		return nil, nil
	}
	return x.FromArgs(args...)
}

// fieldSeqIndexer indexes records by a string field and then sequence
// number, so one field value's records are one range, in record order.
type fieldSeqIndexer[T any] struct {
	field func(*T) string
	seq   func(*T) uint64
}

func fieldSeqKey(field string, seq uint64) []byte {
	key := make([]byte, 0, len(field)+17)
	return seqKey(append(append(key, field...), 0), seq)
}

func (x fieldSeqIndexer[T]) FromObject(raw any) (bool, []byte, error) {
	rec := raw.(*T)
	return true, fieldSeqKey(x.field(rec), x.seq(rec)), nil
}

func (x fieldSeqIndexer[T]) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("field index takes a value and a seq, got %d arguments", len(args))
	}
	field, ok1 := args[0].(string)
	seq, ok2 := args[1].(uint64)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("field index takes a string and a uint64, got %T and %T", args[0], args[1])
	}
	return fieldSeqKey(field, seq), nil
}

func (x fieldSeqIndexer[T]) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("field index prefix takes a value, got %d arguments", len(args))
	}
	field, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("field index prefix takes a string, got %T", args[0])
	}
	return append([]byte(field), 0), nil
}
