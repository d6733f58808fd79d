package sandbox

// Event is something that happened to an account's data and that webhooks
// report. JSON is the whole event, {id, type, createdAt, data} with data the
// record as it was right after the change, encoded once when the event
// happens: it is both what GET /_sandbox/events lists and the webhook body.
type Event struct {
	ID   string
	Type string
	JSON []byte

	Seq uint64
}

// MarshalJSON writes the event as it was encoded when it happened.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.JSON, nil
}
