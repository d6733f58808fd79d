package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/testcampaign/kit/sandbox"
)

// injectFaults carries out the account's fault plan on API requests. It runs
// before limitRate, so that an injected failure does not use up the real
// limit, and reports the budget as it stands.
func (s *Server) injectFaults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := accountOf(r)
		if a == nil || strings.HasPrefix(r.URL.Path, controlPrefix) {
			next.ServeHTTP(w, r)
			return
		}
		plan, ok := a.Faults.Take()
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if plan.DelayMS > 0 {
			select {
			case <-time.After(time.Duration(plan.DelayMS) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if plan.Status == 0 {
			next.ServeHTTP(w, r)
			return
		}
		// The budget as it stands: the injected failure spent none of it.
		setRateHeaders(w, a.Limiter.Peek(a.Clock.Now()))
		if plan.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		s.writeError(w, r, sandbox.Errorf(sandbox.FaultCodes[plan.Status], "failure injected by POST /_sandbox/faults"))
	})
}
