package sandbox

// Delivery is one attempt to POST an event to a webhook, or a delivery the
// sandbox dropped without trying.
type Delivery struct {
	ID        string `json:"id"`
	WebhookID string `json:"webhookId"`
	EventID   string `json:"eventId"`
	EventType string `json:"eventType"`
	URL       string `json:"url"`
	Attempt   int    `json:"attempt"`
	At        Time   `json:"at"`
	// StatusCode is the receiver's answer, 0 when there was none.
	StatusCode int `json:"statusCode"`
	// Error says why the attempt failed; empty on success.
	Error string `json:"error"`
	// NextAttemptAt is when the next try is due, nil when there is none.
	NextAttemptAt *Time `json:"nextAttemptAt"`
	// Fault is the webhook fault that touched the attempt, as it stood
	// when it hit the delivery; nil when none did.
	Fault *Fault `json:"fault"`

	// Seq orders an account's deliveries and is the cursor of their pages.
	Seq uint64 `json:"-"`
}

// Settlement is what an account's deliveries are doing, as
// POST /_sandbox/deliveries/settle answers it.
type Settlement struct {
	// Settled is true when no delivery is in flight, queued or due.
	Settled  bool `json:"settled"`
	InFlight int  `json:"inFlight"`
	Queued   int  `json:"queued"`
	// Due counts the retries whose time has come on the account's clock
	// and that have not yet been queued.
	Due int `json:"due"`
	// Scheduled counts the retries, and the deliveries a delay fault
	// holds, still waiting for their time, which
	// settling does not wait for: move a frozen clock to make them due.
	Scheduled int `json:"scheduled"`
	// Held counts the deliveries a reorder fault holds back until the next
	// event to their webhook, which settling does not wait for either.
	Held int `json:"held"`
}
