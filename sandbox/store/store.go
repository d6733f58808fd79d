// Package store keeps the sandbox's records in go-memdb. Every write is one
// transaction, so a request either changes everything it should or nothing.
package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/testcampaign/kit/sandbox"
)

// Store is the in-memory sandbox.Store. It is safe for concurrent use: reads
// see a snapshot, writes are serialized by memdb.
type Store struct {
	db     *memdb.MemDB
	schema *memdb.DBSchema
	clock  sandbox.Clock
	seed   sandbox.Seed
	// onEvent, if set, hears every event after the write that produced it
	// has committed; webhook delivery hangs off it.
	onEvent func(sandbox.Event)
}

var _ sandbox.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithEventListener calls fn with every event once its write has committed.
// fn runs on the writer's goroutine and must not block.
func WithEventListener(fn func(sandbox.Event)) Option {
	return func(s *Store) { s.onEvent = fn }
}

// New returns an empty store whose accounts are seeded with seed.
func New(clock sandbox.Clock, seed sandbox.Seed, opts ...Option) (*Store, error) {
	s := &Store{schema: schema(), clock: clock, seed: seed}
	db, err := memdb.NewMemDB(s.schema)
	if err != nil {
		return nil, fmt.Errorf("build memdb schema: %w", err)
	}
	s.db = db
	for _, opt := range opts {
		opt(s)
	}
	return s, nil
}

// write runs fn in one write transaction and commits only if fn succeeds. It
// is the one way the store changes, so no write can be left half done.
func (s *Store) write(fn func(txn *memdb.Txn) error) error {
	txn := s.db.Txn(true)
	defer txn.Abort()
	if err := fn(txn); err != nil {
		return err
	}
	txn.Commit()
	return nil
}

// sequence is a per-account, per-kind counter.
type sequence struct {
	AccountID string
	Kind      string
	Value     uint64
}

// nextSeq returns the next number of the account's counter for kind.
func nextSeq(txn *memdb.Txn, accountID, kind string) (uint64, error) {
	next := sequence{AccountID: accountID, Kind: kind, Value: 1}
	raw, err := txn.First(tableSequences, indexID, accountID, kind)
	if err != nil {
		return 0, fmt.Errorf("read %s sequence: %w", kind, err)
	}
	if raw != nil {
		next.Value = raw.(*sequence).Value + 1
	}
	if err := txn.Insert(tableSequences, &next); err != nil {
		return 0, fmt.Errorf("advance %s sequence: %w", kind, err)
	}
	return next.Value, nil
}

// ID prefixes, one per record kind.
const (
	kindCampaign = "cmp"
	kindBug      = "bug"
	kindTester   = "tst"
	kindWebhook  = "whk"
	kindEvent    = "evt"
	kindDelivery = "dlv"
)

// newID returns the next sequence number and ID of a kind of record.
func newID(txn *memdb.Txn, accountID, kind string) (uint64, string, error) {
	seq, err := nextSeq(txn, accountID, kind)
	if err != nil {
		return 0, "", err
	}
	return seq, fmt.Sprintf("%s_%06d", kind, seq), nil
}

// emit records an event in the same transaction as the change it reports and
// hands it to the listener only after that transaction commits. Every event
// goes through here.
func (s *Store) emit(txn *memdb.Txn, accountID, eventType string, record any) error {
	data, err := json.Marshal(record)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", eventType, err)
	}
	seq, id, err := newID(txn, accountID, kindEvent)
	if err != nil {
		return err
	}
	event := &sandbox.Event{
		ID: id, Type: eventType, CreatedAt: s.now(), Data: data,
		AccountID: accountID, Seq: seq,
	}
	if err := txn.Insert(tableEvents, event); err != nil {
		return fmt.Errorf("insert %s event: %w", eventType, err)
	}
	if s.onEvent != nil {
		txn.Defer(func() { s.onEvent(*event) })
	}
	return nil
}

func (s *Store) now() time.Time {
	return sandbox.Timestamp(s.clock.Now())
}

// get returns a copy of the account's record with the given ID, or NOT_FOUND.
func get[T any](s *Store, table, noun, accountID, id string) (T, error) {
	var zero T
	raw, err := s.db.Txn(false).First(table, indexID, accountID, id)
	if err != nil {
		return zero, fmt.Errorf("look up %s %q: %w", noun, id, err)
	}
	if raw == nil {
		return zero, sandbox.Errorf(sandbox.ErrNotFound, "no %s with id %q", noun, id)
	}
	return *raw.(*T), nil
}

// list returns one page of the records whose index key starts with prefix,
// newest first. The page starts at the cursor's position in the index, so a
// page costs its own length plus the records that keep rejects, never a walk
// of the whole table.
func list[T any](s *Store, table, index string, prefix []any, page sandbox.PageRequest, seqOf func(*T) uint64, keep func(*T) bool) (sandbox.Page[T], error) {
	indexer := s.schema.Tables[table].Indexes[index].Indexer.(*memdb.CompoundIndex)
	prefixKey, err := indexer.PrefixFromArgs(prefix...)
	if err != nil {
		return sandbox.Page[T]{}, fmt.Errorf("build %s.%s prefix: %w", table, index, err)
	}
	// memdb appends the primary key to the keys of non-unique indexes, so a
	// bound at the cursor's own seq sorts above records with that seq: start
	// there and skip what is not below the cursor.
	bound := uint64(math.MaxUint64)
	if page.Before > 0 {
		bound = page.Before
	}
	it, err := s.db.Txn(false).ReverseLowerBound(table, index, append(prefix, bound)...)
	if err != nil {
		return sandbox.Page[T]{}, fmt.Errorf("scan %s.%s: %w", table, index, err)
	}
	var (
		items   []T
		hasMore bool
		lastSeq uint64
	)
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if !keyHasPrefix(indexer, raw, prefixKey) {
			break
		}
		rec := raw.(*T)
		if page.Before > 0 && seqOf(rec) >= page.Before || keep != nil && !keep(rec) {
			continue
		}
		if len(items) == page.Limit {
			hasMore = true
			break
		}
		items = append(items, *rec)
		lastSeq = seqOf(rec)
	}
	return sandbox.NewPage(items, hasMore, lastSeq), nil
}

// keyHasPrefix reports whether raw's key in the index starts with prefix: the
// reverse iterator runs on past the prefix, into the previous account or
// filter value, and this is where it stops.
func keyHasPrefix(indexer memdb.SingleIndexer, raw any, prefix []byte) bool {
	ok, key, err := indexer.FromObject(raw)
	return err == nil && ok && bytes.HasPrefix(key, prefix)
}

// webhookSecret derives a webhook's signing secret from its account and ID, so
// that a frozen-clock run reproduces it while two keys never share one.
func webhookSecret(accountID, webhookID string) string {
	sum := sha256.Sum256([]byte("whsec:" + accountID + ":" + webhookID))
	return "whsec_" + hex.EncodeToString(sum[:24])
}
