package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/testcampaign/kit/sandbox"
)

// storedEvent is an event as the account keeps it: the record it reports is
// the very object the write stored, which no later write changes, so the
// event holds a pointer instead of a copy and is encoded only when someone
// reads it or a webhook wants it, outside the account's write lock.
type storedEvent struct {
	seq uint64
	typ string
	at  sandbox.Time
	// record is a stored *sandbox.Campaign or *sandbox.Bug.
	record any
}

// emit records an event in the same transaction as the change it reports,
// at the same instant, and, if a webhook subscribes to it, hands it to the
// listener once that transaction commits. record is as the table stores it.
func (w *writeTxn) emit(eventType string, record any) error {
	seq, _, err := newID(w.Txn, events, 0)
	if err != nil {
		return err
	}
	e := &storedEvent{seq: seq, typ: eventType, at: w.now, record: record}
	if _, _, err := put(w.Txn, events, e); err != nil {
		return err
	}
	w.cost += eventBytes
	if err := w.pruneEvents(seq); err != nil {
		return err
	}
	if w.d.opts.OnEvent == nil || !w.d.webhooked.Load() {
		return nil
	}
	hooks, err := w.d.webhooks(w.Txn)
	if err != nil {
		return err
	}
	wanted := hooks[:0]
	for _, h := range hooks {
		if h.Wants(eventType) {
			wanted = append(wanted, h)
		}
	}
	if len(wanted) > 0 {
		w.Defer(func() {
			if event, err := w.d.event(e); err == nil {
				w.d.opts.OnEvent(w.ctx, event, wanted)
			}
		})
	}
	return nil
}

// pruneEvents drops the oldest block of events once every event in it is
// older than the account keeps: a block at a time, so the oldest path of the
// tree is copied once per blockSize events, at the cost of holding up to
// blockSize-1 events past the limit, which Events hides.
func (w *writeTxn) pruneEvents(newest uint64) error {
	keep := uint64(w.d.limits.Events)
	if newest <= keep || (newest-keep)%blockSize != 0 {
		return nil
	}
	if err := dropFullBlock(w.Txn, events, (newest-keep)/blockSize-1); err != nil {
		return err
	}
	w.cost -= blockSize * eventBytes
	return nil
}

// event encodes a stored event as the API shows it: {id, type, createdAt,
// data}, data with absolute times.
func (d *DB) event(e *storedEvent) (sandbox.Event, error) {
	var data any
	switch r := e.record.(type) {
	case *sandbox.Campaign:
		data = resolved(d, campaigns, *r)
	case *sandbox.Bug:
		data = resolved(d, bugs, *r)
	default:
		return sandbox.Event{}, fmt.Errorf("event %d reports a %T", e.seq, e.record)
	}
	id := formatID(events.kind, e.seq)
	encoded, err := json.Marshal(struct {
		ID        string       `json:"id"`
		Type      string       `json:"type"`
		CreatedAt sandbox.Time `json:"createdAt"`
		Data      any          `json:"data"`
	}{id, e.typ, e.at, data})
	if err != nil {
		return sandbox.Event{}, fmt.Errorf("encode %s event: %w", e.typ, err)
	}
	return sandbox.Event{ID: id, Type: e.typ, JSON: encoded, Seq: e.seq}, nil
}

// Events lists the account's most recent events, newest first.
func (d *DB) Events(ctx context.Context, page sandbox.PageRequest) (sandbox.Page[sandbox.Event], error) {
	newest, err := lastSeq(d.db.Txn(false), events)
	if err != nil {
		return sandbox.Page[sandbox.Event]{}, err
	}
	stored, err := list(ctx, d, events, struct{}{}, newest-min(newest, uint64(d.limits.Events)), page)
	if err != nil {
		return sandbox.Page[sandbox.Event]{}, err
	}
	out := sandbox.Page[sandbox.Event]{Items: make([]sandbox.Event, len(stored.Items)), HasMore: stored.HasMore, NextCursor: stored.NextCursor}
	for i := range stored.Items {
		if out.Items[i], err = d.event(&stored.Items[i]); err != nil {
			return sandbox.Page[sandbox.Event]{}, err
		}
	}
	return out, nil
}
