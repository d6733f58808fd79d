package sandbox

import "time"

// Bounds of the sandbox controls.
const (
	MaxFaultCount = 1000
	MaxFaultDelay = 30 * time.Second
	MaxClockMove  = 366 * 24 * time.Hour
)

// FaultPlan makes an account's next Count API requests fail with Status, or
// be slow by Delay, or both, so that client error paths can be tested.
type FaultPlan struct {
	Status  int   `json:"status"`
	Count   int   `json:"count"`
	DelayMS int64 `json:"delayMs"`
}

// FaultCodes are the failures a plan can inject, by status.
var FaultCodes = map[int]string{
	429: ErrRateLimitExceeded,
	500: ErrInternal,
}

// ParseFaultPlan decodes and validates a fault plan: status 429 or 500 (or
// absent for a slow-down only), count 1 to 1000 (default 1), delayMs 0 to
// 30000.
func ParseFaultPlan(body []byte) (FaultPlan, error) {
	obj, err := decodeObject(body, "status", "count", "delayMs")
	if err != nil {
		return FaultPlan{}, err
	}
	plan := FaultPlan{Count: 1}
	if n, ok := obj.optionalNumber("status"); ok {
		plan.Status = obj.checkInteger("status", n, 0, 599)
		if _, known := FaultCodes[plan.Status]; plan.Status != 0 && !known {
			obj.errs.add("status", "must be 429 or 500 (got %d)", plan.Status)
		}
	}
	if n, ok := obj.optionalNumber("count"); ok {
		plan.Count = obj.checkInteger("count", n, 1, MaxFaultCount)
	}
	if n, ok := obj.optionalNumber("delayMs"); ok {
		plan.DelayMS = int64(obj.checkInteger("delayMs", n, 0, int(MaxFaultDelay/time.Millisecond)))
	}
	if len(obj.errs) == 0 && plan.Status == 0 && plan.DelayMS == 0 {
		obj.errs.add("status", "or delayMs is required")
	}
	return plan, obj.errs.err()
}

// ParseClockMove decodes {"advance": "<duration>"}, a forward move of the
// frozen clock of at most a year.
func ParseClockMove(body []byte) (time.Duration, error) {
	obj, err := decodeObject(body, "advance")
	if err != nil {
		return 0, err
	}
	raw, ok := obj.requireString("advance")
	d, parseErr := time.ParseDuration(raw)
	if ok && (parseErr != nil || d <= 0 || d > MaxClockMove) {
		obj.errs.add("advance", "must be a positive duration of at most %s, such as \"90s\" or \"1h30m\" (got %q)", MaxClockMove, Echo(raw))
	}
	return d, obj.errs.err()
}
