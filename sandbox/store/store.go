// Package store keeps the sandbox's records in go-memdb, one database per
// account. Every account starts as a snapshot of one seeded template, so a new
// account costs only what it then writes, and every write is one transaction,
// so a request either changes everything it should or nothing.
package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// Limits bound what one account may hold.
type Limits struct {
	// Records caps the campaigns, and separately the bugs, of an account.
	Records int
	// Webhooks caps the webhooks of an account.
	Webhooks int
	// Events is how many of the most recent events an account keeps.
	Events int
}

// DefaultLimits are the limits of a sandbox started without flags.
var DefaultLimits = Limits{Records: 1_000_000, Webhooks: 16, Events: 10_000}

// Or returns l with each zero limit taken from def.
func (l Limits) Or(def Limits) Limits {
	return Limits{Records: cmp.Or(l.Records, def.Records), Webhooks: cmp.Or(l.Webhooks, def.Webhooks), Events: cmp.Or(l.Events, def.Events)}
}

// Template is the seeded database every account starts from. It is written
// once, by NewTemplate, and only read after that.
type Template struct {
	db     *memdb.MemDB
	limits Limits
}

// NewTemplate seeds a database with seed. Seeded times are stored as minus
// their age: relative to an origin of zero, which each account sets to the
// moment it was opened.
func NewTemplate(seed sandbox.Seed, limits Limits) (*Template, error) {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		return nil, fmt.Errorf("build memdb schema: %w", err)
	}
	t := &Template{db: db, limits: limits}
	seeding := &DB{db: db, limits: limits}
	if err := seeding.write(context.Background(), func(w *writeTxn) error { return seedTemplate(w, seed) }); err != nil {
		return nil, err
	}
	return t, nil
}

// Meter keeps the cost of what accounts hold within a budget shared by all
// of them.
type Meter interface {
	// Charge asks for n more bytes before a write commits; an error (a
	// LIMIT_REACHED) refuses the write.
	Charge(n int64) error
	// Release gives back n bytes that a committed write freed.
	Release(n int64)
}

// Options are what an account's database needs besides its template.
type Options struct {
	// OnEvent, if set, hears every event that one of the account's
	// webhooks subscribes to, with those webhooks, once the write that
	// produced it has committed, on the writer's goroutine and with its
	// context. A panic in it is the caller's to contain.
	OnEvent func(context.Context, sandbox.Event, []sandbox.Webhook)
	// Meter, if set, is charged for every record and event the account
	// writes.
	Meter Meter
}

// DB is one account's database. It is safe for concurrent use: reads see a
// snapshot, writes are serialized by memdb, and no two accounts share a lock.
//
// Records hold their times relative to origin, the account's clock reading
// when it was opened; they are resolved on the way out. That is what lets a
// new account share the template's records and still see them as recent:
// "seeded three days ago" stays three days before the account began.
type DB struct {
	accountID string
	db        *memdb.MemDB
	clock     sandbox.Clock
	origin    sandbox.Time
	limits    Limits
	opts      Options
	// webhooked is set by the first write that adds a webhook, under
	// memdb's writer lock, which serialises writes: until then no event
	// has a webhook to look up, and a write need not read the table to
	// learn so. The template holds none.
	webhooked atomic.Bool
}

var _ sandbox.Store = (*DB)(nil)

// Open returns the database of a new account: a snapshot of the template,
// O(1), whose origin is clock's now.
func (t *Template) Open(accountID string, clock sandbox.Clock, opts Options) *DB {
	return &DB{accountID: accountID, db: t.db.Snapshot(), clock: clock, origin: sandbox.At(clock.Now()), limits: t.limits, opts: opts}
}

// writeTxn is one write in progress: its transaction, the one clock reading
// every record and event it writes carries, and what it costs.
type writeTxn struct {
	*memdb.Txn
	d *DB
	// ctx is the writer's, which the listener of its events hears with
	// them.
	ctx context.Context
	// now is absolute; stored turns it relative on the way in.
	now  sandbox.Time
	cost int64
}

// write runs fn in one write transaction and commits only if fn succeeds
// and the meter accepts what it adds. It is the one way the store changes,
// so no write can be left half done. A caller already gone writes nothing.
func (d *DB) write(ctx context.Context, fn func(w *writeTxn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	txn := d.db.Txn(true)
	defer txn.Abort()
	w := &writeTxn{Txn: txn, d: d, ctx: ctx}
	if d.clock != nil {
		w.now = sandbox.At(d.clock.Now())
	}
	if err := fn(w); err != nil {
		return err
	}
	if d.opts.Meter != nil && w.cost > 0 {
		if err := d.opts.Meter.Charge(w.cost); err != nil {
			return err
		}
	}
	txn.Commit()
	if d.opts.Meter != nil && w.cost < 0 {
		d.opts.Meter.Release(-w.cost)
	}
	return nil
}

// Bytes a record or an event is charged, besides the text it holds: its
// struct and its share of its block and of full postings chunks; and what a
// postings chunk or a counts row costs on its own, which a list or a
// campaign with few records does not share out. BenchmarkRetainedPerRecord
// measures them against what the meter charges.
const (
	recordBytes = 256
	eventBytes  = 64
	chunkBytes  = 640
	countsBytes = 640
)

// insert stores rec as the table's next record and, when that fills its
// block, files the block in its postings lists.
func insert[T, F any](w *writeTxn, t table[T, F], rec T, text int) (*T, error) {
	s := stored(w.d, t, rec)
	b, recs, err := put(w.Txn, t, s)
	if err != nil {
		return nil, err
	}
	if b.full() {
		if err := fileBlock(w, t, recs); err != nil {
			return nil, err
		}
	}
	w.cost += recordBytes + int64(text)
	return s, nil
}

// replace stores next in place of old, the record with the same sequence
// number, and, if its block is filed, moves it between postings lists as
// its values changed.
func replace[T, F any](w *writeTxn, t table[T, F], old *T, next T) (*T, error) {
	s := stored(w.d, t, next)
	b, _, err := put(w.Txn, t, s)
	if err != nil || !b.full() {
		return s, err
	}
	var (
		was, is [4]string
		moves   [8]posting
	)
	moved := moves[:0]
	for _, f := range t.filters {
		before, after := f.values(was[:0], old), f.values(is[:0], s)
		for _, v := range before {
			if !slices.Contains(after, v) {
				moved = appendMove(moved, posting{list: f.list(t, v), seq: t.seq(s), remove: true})
			}
		}
		for _, v := range after {
			if !slices.Contains(before, v) {
				moved = appendMove(moved, posting{list: f.list(t, v), seq: t.seq(s)})
			}
		}
	}
	if err := refile(w, moved); err != nil {
		return nil, err
	}
	return s, nil
}

// appendMove adds m unless a move of the same list is there already: a
// value a record holds twice files it once.
func appendMove(moves []posting, m posting) []posting {
	for _, prev := range moves {
		if prev.list == m.list {
			return moves
		}
	}
	return append(moves, m)
}

// newID returns the next sequence number and ID of the table, or
// LIMIT_REACHED once the table holds max records.
func newID[T, F any](txn *memdb.Txn, t table[T, F], max int) (uint64, string, error) {
	last, err := lastSeq(txn, t)
	if err != nil {
		return 0, "", err
	}
	seq := last + 1
	if max > 0 && seq > uint64(max) {
		return 0, "", sandbox.Errorf(sandbox.ErrLimitReached, "the account already holds %d %s, as many as it may", max, t.name)
	}
	return seq, formatID(t.kind, seq), nil
}

func formatID(kind string, seq uint64) string {
	digits := strconv.FormatUint(seq, 10)
	if len(digits) >= 6 {
		return kind + "_" + digits
	}
	return kind + "_" + "000000"[len(digits):] + digits
}

// parseID returns the sequence number an ID of the table carries, or false
// for anything that is not such an ID.
func parseID[T, F any](t table[T, F], id string) (uint64, bool) {
	digits, ok := strings.CutPrefix(id, t.kind+"_")
	if !ok {
		return 0, false
	}
	// Only the canonical spelling, formatID's, names the record: cmp_1 is
	// not cmp_000001, nor is cmp_0001000 cmp_001000.
	if len(digits) < 6 || (len(digits) > 6 && digits[0] == '0') {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	return seq, err == nil && seq > 0
}

// resolved returns rec with absolute times.
func resolved[T, F any](d *DB, t table[T, F], rec T) T {
	return t.shift(rec, d.origin)
}

// stored returns a copy of rec with times relative to the origin, as the
// table holds it.
func stored[T, F any](d *DB, t table[T, F], rec T) *T {
	s := t.shift(rec, -d.origin)
	return &s
}

// get returns the record with the given ID, or NOT_FOUND.
func get[T, F any](txn *memdb.Txn, t table[T, F], noun, id string) (T, error) {
	var none T
	seq, ok := parseID(t, id)
	if !ok {
		return none, sandbox.Errorf(sandbox.ErrNotFound, "no %s with id %q", noun, sandbox.Echo(id))
	}
	rec, found, err := lookup(txn, t, seq)
	if err != nil {
		return none, fmt.Errorf("look up %s %q: %w", noun, id, err)
	}
	if !found {
		return none, sandbox.Errorf(sandbox.ErrNotFound, "no %s with id %q", noun, sandbox.Echo(id))
	}
	return rec, nil
}

// list returns one page of the table's records above floor that pass f,
// newest first. With no filter it walks the table's blocks down from the
// cursor; with filters it joins their postings lists (and the few records
// not yet filed), so a page costs its own length however many records the
// account holds and however few the filters match.
func list[T, F any](ctx context.Context, d *DB, t table[T, F], f F, floor uint64, page sandbox.PageRequest) (sandbox.Page[T], error) {
	txn := d.db.Txn(false)
	records := &blockCursor[T, F]{txn: txn, t: t}
	seekers, err := filterCursors(records, f)
	if err != nil {
		return sandbox.Page[T]{}, fmt.Errorf("list %s: %w", t.name, err)
	}
	if len(seekers) == 0 {
		seekers = []seeker{records}
	}
	bound := ^uint64(0)
	if page.Before > 0 {
		bound = page.Before - 1
	}
	var (
		// Room for the page at once: growing it record by record
		// allocated and copied it three times over.
		items   = make([]T, 0, min(page.Limit, sandbox.MaxPageSize))
		hasMore bool
		lastSeq uint64
	)
	for bound > floor {
		seq, ok, err := seekAll(ctx, seekers, bound)
		if err != nil {
			return sandbox.Page[T]{}, fmt.Errorf("list %s: %w", t.name, err)
		}
		if !ok || seq <= floor {
			break
		}
		if len(items) == page.Limit {
			hasMore = true
			break
		}
		rec, found, err := records.at(seq)
		if err != nil {
			return sandbox.Page[T]{}, fmt.Errorf("list %s: %w", t.name, err)
		}
		if !found {
			return sandbox.Page[T]{}, fmt.Errorf("list %s: %d is filed but not stored", t.name, seq)
		}
		items = append(items, resolved(d, t, rec))
		lastSeq, bound = seq, seq-1
	}
	return sandbox.NewPage(items, hasMore, lastSeq), nil
}
