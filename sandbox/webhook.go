package sandbox

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Event types a webhook can subscribe to.
const (
	EventCampaignCreated = "campaign.created"
	EventBugCreated      = "bug.created"
	EventBugUpdated      = "bug.updated"
	// EventAny subscribes a webhook to every event type.
	EventAny = "*"
)

// EventTypes lists the values a webhook's events may hold.
var EventTypes = []string{EventCampaignCreated, EventBugCreated, EventBugUpdated, EventAny}

// WebhookActive is the status of every registered webhook.
const WebhookActive = "active"

// MaxWebhookURLLength bounds a webhook URL.
const MaxWebhookURLLength = 2048

// Webhook is an endpoint that receives the account's events.
type Webhook struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Secret    string   `json:"secret"`
	Status    string   `json:"status"`
	CreatedAt Time     `json:"createdAt"`

	Seq uint64 `json:"-"`
}

// Wants reports whether the webhook subscribes to events of the given type.
func (w Webhook) Wants(eventType string) bool {
	return slices.Contains(w.Events, EventAny) || slices.Contains(w.Events, eventType)
}

// WebhookInput is a valid request to register a webhook.
type WebhookInput struct {
	URL    string
	Events []string
}

// ParseWebhookInput decodes and validates a register-webhook body: url must be
// an absolute http or https URL and events a non-empty list of known types.
// Repeated event types are kept once.
func ParseWebhookInput(body []byte) (WebhookInput, error) {
	obj, err := decodeObject(body, "url", "events")
	if err != nil {
		return WebhookInput{}, err
	}
	var in WebhookInput
	if raw, ok := obj.requireString("url"); ok {
		u, err := url.Parse(raw)
		switch {
		case len(raw) > MaxWebhookURLLength:
			obj.errs.add("url", "must be at most %d bytes long", MaxWebhookURLLength)
		// Hostname, not Host: "http://:" has a Host (":") but no host name.
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
			obj.errs.add("url", "must be an absolute http or https URL (got %q)", Echo(raw))
		default:
			in.URL = raw
		}
	}
	if events, ok := obj.requireStringList("events"); ok {
		if len(events) == 0 {
			obj.errs.add("events", "must name at least one event type")
		}
		var unknown []string
		for _, e := range events {
			if !slices.Contains(EventTypes, e) {
				unknown = append(unknown, strconv.Quote(e))
			} else if !slices.Contains(in.Events, e) {
				in.Events = append(in.Events, e)
			}
		}
		// One detail for the field, however many of its items are wrong.
		if len(unknown) > 0 {
			obj.errs.add("events", "must hold only %s (got %s)", strings.Join(EventTypes, ", "), Echo(strings.Join(unknown, ", ")))
		}
	}
	return in, obj.errs.err()
}
