package model

import (
	"net/http"
	"strconv"
)

// faultScope holds an answer a fault gave in the API's place to naming the
// budget its rate-limit headers describe (RATE-14): they are the key's /v1
// windows as they stand (FAULT-26), so a 429 of a status fault is a
// statement about the key like any other, unless the fault planned an
// X-RateLimit-Scope of its own (FAULT-16).
func (c *check) faultScope(f *plannedFault) {
	o := c.o
	for name := range f.headers {
		if http.CanonicalHeaderKey(name) == "X-Ratelimit-Scope" {
			return
		}
	}
	if o.Header.Get("X-RateLimit-Limit") == "" && o.Status != http.StatusTooManyRequests {
		return
	}
	c.judge("RATE-14")
	if got := o.Header.Get("X-RateLimit-Scope"); got != "key" {
		c.fail("RATE-14", "every set of rate-limit headers, and every 429, names its budget", `X-RateLimit-Scope "key" on the answer of `+f.String()+`, which stands in the /v1 API's place`, "X-RateLimit-Scope "+strconv.Quote(got))
	}
}
