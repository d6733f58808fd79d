package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// CORS lets scripts of the listed origins call the sandbox from a browser.
// The zero value lets none, and sends no Access-Control-* header (WEB-1).
type CORS struct {
	// Origins are the origins allowed, as a browser sends them in Origin
	// (scheme://host[:port]); "*" alone allows every origin.
	Origins []string
}

// ParseCORSOrigins reads a comma-separated list of origins, or "*", as
// -cors-origins takes it. An empty list allows no origin.
func ParseCORSOrigins(list string) (CORS, error) {
	var c CORS
	for _, origin := range strings.Split(list, ",") {
		origin = strings.TrimSpace(origin)
		if origin == "" {
			continue
		}
		if origin == "*" {
			c.Origins = append(c.Origins, origin)
			continue
		}
		u, err := url.Parse(origin)
		if strings.Contains(origin, "*") {
			// Origins match exactly: a pattern would be taken as a host
			// no browser sends, and match nothing.
			return CORS{}, fmt.Errorf("%q is a pattern: list each origin exactly, or * alone for any", origin)
		}
		if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return CORS{}, fmt.Errorf("%q is not an origin: want scheme://host[:port], such as http://localhost:3000, or *", origin)
		}
		// Browsers send Origin in lower case and without a trailing slash.
		c.Origins = append(c.Origins, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	if len(c.Origins) > 1 && c.allowsAny() {
		return CORS{}, errors.New("* allows every origin; list no other beside it")
	}
	return c, nil
}

func (c CORS) enabled() bool { return len(c.Origins) > 0 }

func (c CORS) allowsAny() bool {
	for _, origin := range c.Origins {
		if origin == "*" {
			return true
		}
	}
	return false
}

func (c CORS) allows(origin string) bool {
	for _, allowed := range c.Origins {
		if allowed == "*" || allowed == origin {
			return true
		}
	}
	return false
}

// exposedHeaders are the response headers a script reads to handle limits
// and faults, which browsers hide from it unless named. The trailing "*"
// also exposes, to requests without cookies (all the sandbox needs), the
// extra headers a status fault may set; browsers that know only names read
// the list before it.
const exposedHeaders = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Scope, Retry-After, " + faultHeader + ", *"

// preflightMaxAge is how long a browser may reuse a preflight's answer: long
// enough to spare a test page one preflight per request, short enough that a
// sandbox restarted with other origins is seen within minutes.
const preflightMaxAge = "600"

// allowOrigins answers preflights of allowed origins (WEB-2, WEB-7) and
// lets scripts of those origins read every answer, errors included
// (WEB-3). It runs outside the client budget, the key, the journal, faults
// and rate limits: a browser sends a preflight without the Authorization
// header, before the request it asks about, which is the one counted,
// journaled and faulted; answering one costs what refusing it would. A
// preflight from an origin not allowed, or an OPTIONS request that is no
// preflight, goes on as any request does.
func (s *Server) allowOrigins(next http.Handler) http.Handler {
	if !s.cors.enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// The answer differs by origin, so caches must keep one per origin;
		// with "*" it does not.
		if !s.cors.allowsAny() {
			h.Add("Vary", "Origin")
		}
		origin := r.Header.Get("Origin")
		if origin == "" || !s.cors.allows(origin) {
			next.ServeHTTP(w, r)
			return
		}
		if s.cors.allowsAny() {
			h.Set("Access-Control-Allow-Origin", "*")
		} else {
			h.Set("Access-Control-Allow-Origin", origin)
		}
		asked := r.Header.Get("Access-Control-Request-Method")
		if r.Method != http.MethodOptions || asked == "" {
			h.Set("Access-Control-Expose-Headers", exposedHeaders)
			next.ServeHTTP(w, r)
			return
		}
		h.Add("Vary", "Access-Control-Request-Method")
		h.Add("Vary", "Access-Control-Request-Headers")
		methods := s.routedMethods(r)
		if len(methods) == 0 {
			// No route serves the path: the request may go, and its script
			// reads the 404 envelope instead of a CORS failure.
			methods = allowMethods
		}
		h.Set("Access-Control-Allow-Methods", strings.Join(methods, ", "))
		// Every header the script asks to send: the sandbox reads
		// Authorization and Content-Type and ignores the rest, such as the
		// tracing and retry headers SDKs add. "*" would not cover
		// Authorization.
		if headers := r.Header.Values("Access-Control-Request-Headers"); len(headers) > 0 {
			h.Set("Access-Control-Allow-Headers", strings.Join(headers, ", "))
		}
		h.Set("Access-Control-Max-Age", preflightMaxAge)
		w.WriteHeader(http.StatusNoContent)
	})
}
