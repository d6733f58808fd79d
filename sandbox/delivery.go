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

	// Seq orders an account's deliveries and is the cursor of their pages.
	Seq uint64 `json:"-"`
}
