package conformance_test

import (
	"net/http"
)

// webhookFaultProofs break the webhook faults (FAULT-33..40). The
// deliveries are the sandbox's own, out of a proxy's reach, so each one
// changes the plan on its way in or the records on their way out.
func webhookFaultProofs() []proof {
	eventPlans := func(edit func(plan map[string]any)) func(http.Handler) http.Handler {
		return plans(func(plan map[string]any) {
			if plan["event"] != nil {
				edit(plan)
			}
		})
	}
	kind := func(from, to string) func(map[string]any) {
		return func(plan map[string]any) {
			if plan["webhook"] == from {
				plan["webhook"] = to
			}
		}
	}
	return []proof{
		{
			name: "a webhook fault matched to another event type", rule: "FAULT-33",
			caught: []string{
				"A duplicate webhook fault delivers the event twice with one Webhook-Id, and the records say so",
				"A reorder webhook fault delivers the event after the next one to the same webhook",
				"Bad-signature and stale-timestamp webhook faults make deliveries a receiver must refuse",
			},
			wrap: eventPlans(func(plan map[string]any) { plan["event"] = "bug.updated" }),
		},
		{
			name: "a duplicate sent as a bad signature", rule: "FAULT-34",
			caught: []string{"A duplicate webhook fault delivers the event twice with one Webhook-Id, and the records say so"},
			wrap:   eventPlans(kind("duplicate", "badSignature")),
		},
		{
			name: "a reorder sent as a duplicate", rule: "FAULT-35",
			caught: []string{"A reorder webhook fault delivers the event after the next one to the same webhook"},
			wrap:   eventPlans(kind("reorder", "duplicate")),
		},
		{
			name: "a delay of a tenth", rule: "FAULT-36", opts: frozen,
			caught: []string{"A delayed webhook fault holds the delivery, counted as scheduled, until its time comes"},
			wrap: eventPlans(func(plan map[string]any) {
				if plan["delayMs"] != nil {
					plan["delayMs"] = 100
				}
			}),
		},
		{
			name: "a bad signature sent as a stale timestamp", rule: "FAULT-37",
			caught: []string{"Bad-signature and stale-timestamp webhook faults make deliveries a receiver must refuse"},
			wrap:   eventPlans(kind("badSignature", "staleTimestamp")),
		},
		{
			name: "a stale timestamp sent as a bad signature", rule: "FAULT-38",
			caught: []string{"Bad-signature and stale-timestamp webhook faults make deliveries a receiver must refuse"},
			wrap:   eventPlans(kind("staleTimestamp", "badSignature")),
		},
		{
			name: "a webhook fault takes a request's method and path, and ignores them", rule: "FAULT-40",
			caught: []string{
				"A fault plan with a method on a webhook fault is refused, and the plan stays as it was",
				"A fault plan with a path on a webhook fault is refused, and the plan stays as it was",
			},
			wrap: eventPlans(func(plan map[string]any) {
				delete(plan, "method")
				delete(plan, "path")
			}),
		},
		{
			name: "delivery records that do not name their fault", rule: "FAULT-39",
			caught: []string{"A duplicate webhook fault delivers the event twice with one Webhook-Id, and the records say so"},
			wrap: func(next http.Handler) http.Handler {
				return onControls(next, nil, func(req *http.Request, r *response) {
					if isGet(req, "/_sandbox/deliveries") {
						r.eachItem(func(it map[string]any) { it["fault"] = nil })
					}
				})
			},
		},
	}
}
