package webhook

import "github.com/testcampaign/kit/sandbox"

// MeterStep is how much an outbox charges its meter at a time.
const MeterStep = meterStep

// RecordCharge is what an outbox is charged for keeping the record that
// reads as d, so that tests outside the package can check a meter against
// the records it accounts for.
func RecordCharge(d sandbox.Delivery) int64 {
	return entry{failure: d.Error, fault: d.Fault}.bytes()
}
