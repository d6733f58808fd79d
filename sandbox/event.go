package sandbox

import (
	"encoding/json"
	"time"
)

// Event is something that happened to an account's data and that webhooks
// report. Data holds the record as it was right after the change.
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"createdAt"`
	Data      json.RawMessage `json:"data"`

	AccountID string `json:"-"`
	Seq       uint64 `json:"-"`
}
