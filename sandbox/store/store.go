// Package store keeps the sandbox's records in go-memdb, one database per
// account. Every account starts as a snapshot of one seeded template, so a new
// account costs only what it then writes, and every write is one transaction,
// so a request either changes everything it should or nothing.
package store

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

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
	txn := db.Txn(true)
	defer txn.Abort()
	if err := seedTemplate(txn, seed); err != nil {
		return nil, err
	}
	txn.Commit()
	return t, nil
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
	// onEvent hears every event once the write that produced it has
	// committed.
	onEvent func(sandbox.Event)
}

var _ sandbox.Store = (*DB)(nil)

// Open returns the database of a new account: a snapshot of the template, O(1),
// whose origin is clock's now. onEvent, if not nil, is called with every
// event after its write commits, on the writer's goroutine; a panic in it is
// the caller's to contain.
func (t *Template) Open(accountID string, clock sandbox.Clock, onEvent func(sandbox.Event)) *DB {
	return &DB{accountID: accountID, db: t.db.Snapshot(), clock: clock, origin: sandbox.At(clock.Now()), limits: t.limits, onEvent: onEvent}
}

// write runs fn in one write transaction and commits only if fn succeeds. It
// is the one way the store changes, so no write can be left half done.
func (d *DB) write(fn func(txn *memdb.Txn) error) error {
	txn := d.db.Txn(true)
	defer txn.Abort()
	if err := fn(txn); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// now is the account's clock reading; records built with it are made
// relative to the origin by stored, on their way in.
func (d *DB) now() sandbox.Time {
	return sandbox.At(d.clock.Now())
}

// nextSeq returns the sequence number after the table's last: IDs depend only
// on the order of writes within an account, and no counter is stored.
func nextSeq[T, F any](txn *memdb.Txn, t table[T, F]) (uint64, error) {
	raw, err := txn.Last(t.name, indexID)
	if err != nil {
		return 0, fmt.Errorf("read last %s: %w", t.name, err)
	}
	if raw == nil {
		return 1, nil
	}
	return t.seq(raw.(*T)) + 1, nil
}

// newID returns the next sequence number and ID of the table, or
// LIMIT_REACHED once the table holds max records.
func newID[T, F any](txn *memdb.Txn, t table[T, F], max int) (uint64, string, error) {
	seq, err := nextSeq(txn, t)
	if err != nil {
		return 0, "", err
	}
	if max > 0 && seq > uint64(max) {
		return 0, "", sandbox.Errorf(sandbox.ErrLimitReached, "the account already holds %d %s, as many as it may", max, t.name)
	}
	return seq, formatID(t.kind, seq), nil
}

func formatID(kind string, seq uint64) string {
	return fmt.Sprintf("%s_%06d", kind, seq)
}

// parseID returns the sequence number an ID of the table carries, or false
// for anything that is not such an ID.
func parseID[T, F any](t table[T, F], id string) (uint64, bool) {
	digits, ok := strings.CutPrefix(id, t.kind+"_")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	// Only the canonical spelling names the record: cmp_1 is not cmp_000001.
	return seq, err == nil && seq > 0 && formatID(t.kind, seq) == id
}

// emit records an event in the same transaction as the change it reports and
// hands it to the listener only after that transaction commits. record must
// carry absolute times: the event is encoded once, here.
func (d *DB) emit(txn *memdb.Txn, eventType string, record any) error {
	seq, id, err := newID(txn, events, 0)
	if err != nil {
		return err
	}
	encoded, err := json.Marshal(struct {
		ID        string       `json:"id"`
		Type      string       `json:"type"`
		CreatedAt sandbox.Time `json:"createdAt"`
		Data      any          `json:"data"`
	}{id, eventType, d.now(), record})
	if err != nil {
		return fmt.Errorf("encode %s event: %w", eventType, err)
	}
	event := &sandbox.Event{ID: id, Type: eventType, JSON: encoded, Seq: seq}
	if err := txn.Insert(events.name, event); err != nil {
		return fmt.Errorf("insert %s event: %w", eventType, err)
	}
	if err := d.pruneEvents(txn, seq); err != nil {
		return err
	}
	if d.onEvent != nil {
		txn.Defer(func() { d.onEvent(*event) })
	}
	return nil
}

// eventPruneBatch is how many old events go at once. Deleting one per insert
// would copy the oldest path of the tree on every write; a batch shares those
// copies, at the cost of keeping up to this many events past the limit,
// which Events hides.
const eventPruneBatch = 1024

// pruneEvents drops, every eventPruneBatch events, those older than the
// account keeps.
func (d *DB) pruneEvents(txn *memdb.Txn, newest uint64) error {
	keep := uint64(d.limits.Events)
	if newest <= keep || (newest-keep)%eventPruneBatch != 0 {
		return nil
	}
	it, err := txn.LowerBound(events.name, indexID, uint64(0))
	if err != nil {
		return fmt.Errorf("scan old events: %w", err)
	}
	var old []any
	for raw := it.Next(); raw != nil && raw.(*sandbox.Event).Seq <= newest-keep; raw = it.Next() {
		old = append(old, raw)
	}
	for _, raw := range old {
		if err := txn.Delete(events.name, raw); err != nil {
			return fmt.Errorf("drop old event: %w", err)
		}
	}
	return nil
}

// resolved returns a copy of rec with absolute times.
func resolved[T, F any](d *DB, t table[T, F], rec *T) T {
	out := *rec
	t.shift(&out, d.origin)
	return out
}

// stored returns a copy of rec with times relative to the origin, as the
// table holds it.
func stored[T, F any](d *DB, t table[T, F], rec T) *T {
	t.shift(&rec, -d.origin)
	return &rec
}

// get returns the record with the given ID, or NOT_FOUND.
func get[T, F any](d *DB, txn *memdb.Txn, t table[T, F], noun, id string) (*T, error) {
	seq, ok := parseID(t, id)
	if !ok {
		return nil, sandbox.Errorf(sandbox.ErrNotFound, "no %s with id %q", noun, sandbox.Echo(id))
	}
	raw, err := txn.First(t.name, indexID, seq)
	if err != nil {
		return nil, fmt.Errorf("look up %s %q: %w", noun, id, err)
	}
	if raw == nil {
		return nil, sandbox.Errorf(sandbox.ErrNotFound, "no %s with id %q", noun, sandbox.Echo(id))
	}
	return raw.(*T), nil
}

// list returns one page of the table's records that pass f, newest first.
// It walks the first index that f's values select, or the primary index,
// from the cursor down, so a page costs its own length plus the records the
// other filters reject, never a walk of the whole table.
func list[T, F any](d *DB, t table[T, F], f F, page sandbox.PageRequest) (sandbox.Page[T], error) {
	bound := uint64(math.MaxUint64)
	if page.Before > 0 {
		bound = page.Before - 1
	}
	index, args := indexID, []any{bound}
	// inRange tells when the reverse walk of a filter index has run past
	// its value's range, into the previous value.
	inRange := func(*T) bool { return true }
	for _, ix := range t.indexes {
		if value := ix.filter(f); value != "" {
			index, args = ix.name, []any{value, bound}
			inRange = func(rec *T) bool { return ix.field(rec) == value }
			break
		}
	}
	it, err := d.db.Txn(false).ReverseLowerBound(t.name, index, args...)
	if err != nil {
		return sandbox.Page[T]{}, fmt.Errorf("scan %s.%s: %w", t.name, index, err)
	}
	var (
		items   []T
		hasMore bool
		lastSeq uint64
	)
	for raw := it.Next(); raw != nil; raw = it.Next() {
		rec := raw.(*T)
		if !inRange(rec) {
			break
		}
		if t.match != nil && !t.match(f, rec) {
			continue
		}
		if len(items) == page.Limit {
			hasMore = true
			break
		}
		items = append(items, resolved(d, t, rec))
		lastSeq = t.seq(rec)
	}
	return sandbox.NewPage(items, hasMore, lastSeq), nil
}

// webhookSecret derives a webhook's signing secret from its account and ID, so
// that a frozen-clock run reproduces it while two keys never share one.
func webhookSecret(accountID, webhookID string) string {
	sum := sha256.Sum256([]byte("whsec:" + accountID + ":" + webhookID))
	return "whsec_" + hex.EncodeToString(sum[:24])
}
