package store

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// indexID is every table's one index. Record tables are keyed by block
// number (the open block by openKey), the postings table by list and first sequence number, the counts
// table by campaign sequence number.
const indexID = "id"

// Table names that are not record tables.
const (
	postingsTable = "postings"
	countsTable   = "counts"
)

// table describes one kind of record: where memdb keeps it and which list
// filters have a postings list of their own. It is the one place that says
// so; the schema, the writes and the list queries are all built from it.
type table[T, F any] struct {
	name string
	// kind prefixes the record's IDs.
	kind string
	seq  func(*T) uint64
	// shift returns rec with every time moved by d: records hold times
	// relative to their account's origin (see DB). By value, not through a
	// pointer: a record whose address went to this func value would escape
	// to the heap, one allocation per record read.
	shift func(rec T, d sandbox.Time) T
	// filters are the list filters, each served by its postings lists.
	filters []filter[T, F]
	// codec, if set, packs the table's full blocks: the tables that grow
	// large have one.
	codec *codec[T]
}

// filter is one list filter: the values a record files under (a tester
// files under each of its platforms) and the value a filter asks for, empty
// when it asks for none.
type filter[T, F any] struct {
	name   string
	values func(dst []string, rec *T) []string
	value  func(F) string
}

// one is the values function of a field that holds one value.
func one[T any](field func(*T) string) func([]string, *T) []string {
	return func(dst []string, rec *T) []string { return append(dst, field(rec)) }
}

// list names the postings list of one filter value.
func (f filter[T, F]) list(t table[T, F], value string) string {
	return t.name + "\x00" + f.name + "\x00" + value
}

func (t table[T, F]) schema() *memdb.TableSchema {
	return &memdb.TableSchema{Name: t.name, Indexes: map[string]*memdb.IndexSchema{
		indexID: {Name: indexID, Unique: true, Indexer: blockIndexer[T]{}},
	}}
}

var (
	campaigns = table[sandbox.Campaign, sandbox.CampaignFilter]{
		name: "campaigns", kind: "cmp",
		seq:   func(c *sandbox.Campaign) uint64 { return c.Seq },
		shift: func(c sandbox.Campaign, d sandbox.Time) sandbox.Campaign { c.CreatedAt += d; return c },
		codec: campaignCodec,
		filters: []filter[sandbox.Campaign, sandbox.CampaignFilter]{
			{name: "status", values: one(func(c *sandbox.Campaign) string { return c.Status }), value: func(f sandbox.CampaignFilter) string { return f.Status }},
			{name: "platform", values: one(func(c *sandbox.Campaign) string { return c.Platform }), value: func(f sandbox.CampaignFilter) string { return f.Platform }},
		},
	}
	bugs = table[sandbox.Bug, sandbox.BugFilter]{
		name: "bugs", kind: "bug",
		seq:   func(b *sandbox.Bug) uint64 { return b.Seq },
		shift: func(b sandbox.Bug, d sandbox.Time) sandbox.Bug { b.CreatedAt += d; b.UpdatedAt += d; return b },
		codec: bugCodec,
		filters: []filter[sandbox.Bug, sandbox.BugFilter]{
			{name: "campaign", values: one(func(b *sandbox.Bug) string { return b.CampaignID }), value: func(f sandbox.BugFilter) string { return f.CampaignID }},
			{name: "tester", values: one(func(b *sandbox.Bug) string { return b.TesterID }), value: func(f sandbox.BugFilter) string { return f.TesterID }},
			{name: "status", values: one(func(b *sandbox.Bug) string { return b.Status }), value: func(f sandbox.BugFilter) string { return f.Status }},
			{name: "severity", values: one(func(b *sandbox.Bug) string { return b.Severity }), value: func(f sandbox.BugFilter) string { return f.Severity }},
		},
	}
	testers = table[sandbox.Tester, sandbox.TesterFilter]{
		name: "testers", kind: "tst",
		seq:   func(t *sandbox.Tester) uint64 { return t.Seq },
		shift: func(t sandbox.Tester, d sandbox.Time) sandbox.Tester { t.CreatedAt += d; return t },
		filters: []filter[sandbox.Tester, sandbox.TesterFilter]{
			{name: "platform", values: func(dst []string, t *sandbox.Tester) []string { return append(dst, t.Platforms...) }, value: func(f sandbox.TesterFilter) string { return f.Platform }},
		},
	}
	webhooks = table[sandbox.Webhook, struct{}]{
		name: "webhooks", kind: "whk",
		seq:   func(w *sandbox.Webhook) uint64 { return w.Seq },
		shift: func(w sandbox.Webhook, d sandbox.Time) sandbox.Webhook { w.CreatedAt += d; return w },
	}
	// events hold absolute times, so there is nothing to shift.
	events = table[storedEvent, struct{}]{
		name: "events", kind: "evt",
		seq:   func(e *storedEvent) uint64 { return e.seq },
		shift: func(e storedEvent, _ sandbox.Time) storedEvent { return e },
	}
)

func schema() *memdb.DBSchema {
	return &memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		campaigns.name: campaigns.schema(),
		bugs.name:      bugs.schema(),
		testers.name:   testers.schema(),
		webhooks.name:  webhooks.schema(),
		events.name:    events.schema(),
		postingsTable: {Name: postingsTable, Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: postingsIndexer{}},
		}},
		countsTable: {Name: countsTable, Indexes: map[string]*memdb.IndexSchema{
			indexID: {Name: indexID, Unique: true, Indexer: seqIndexer[bugCounts]{func(c *bugCounts) uint64 { return c.campaign }}},
		}},
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

// seqIndexer indexes objects by a number, without the reflection memdb's
// field indexers use on every insert.
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

// postingsIndexer keys a postings chunk by its list and then its first
// sequence number, so one list's chunks are one range, in record order.
type postingsIndexer struct{}

func postingsKey(list string, first uint64) []byte {
	key := make([]byte, 0, len(list)+17)
	return seqKey(append(append(key, list...), 0), first)
}

func (postingsIndexer) FromObject(raw any) (bool, []byte, error) {
	p := raw.(*postings)
	return true, postingsKey(p.list, p.first), nil
}

func (postingsIndexer) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("postings index takes a list and a seq, got %d arguments", len(args))
	}
	list, ok1 := args[0].(string)
	seq, ok2 := args[1].(uint64)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("postings index takes a string and a uint64, got %T and %T", args[0], args[1])
	}
	return postingsKey(list, seq), nil
}

// statusIndex and severityIndex place a bug's values in bugCounts' arrays.
func statusIndex(status string) int     { return slices.Index(sandbox.BugStatuses, status) }
func severityIndex(severity string) int { return slices.Index(sandbox.Severities, severity) }
