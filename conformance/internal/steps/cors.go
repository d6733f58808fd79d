package steps

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/wire"
	"github.com/testcampaign/kit/conformance/kit"
)

// exposedToScripts are the headers a script reads to handle limits and
// faults, which a sandbox that lets its origin in must expose (WEB-3).
var exposedToScripts = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Scope", "Retry-After", "X-Sandbox-Fault"}

// corsWholeOrNone judges the scenario's answers to requests sent from an
// origin. A run cannot see the sandbox's flags, but its answers say them:
// an answer that lets the origin in says the origin is listed at start-up,
// and then every answer to it, errors and faults included, exposes the
// headers scripts read (WEB-3) and every preflight of it is answered as
// one (WEB-2); no answer letting it in says it is not listed, and then no
// Access-Control-* header is sent at all (WEB-1), whatever else the
// sandbox lists.
func (s *scenarioState) corsWholeOrNone(ctx context.Context, origin string) error {
	o, err := s.expand(origin)
	if err != nil {
		return err
	}
	var asked []*wire.Exchange
	letIn := ""
	for _, e := range s.history {
		if e.ReqHeader.Get("Origin") != o || e.NoAnswer != "" {
			continue
		}
		asked = append(asked, e)
		if letIn == "" && e.Header.Get("Access-Control-Allow-Origin") != "" {
			letIn = answerLine(e)
		}
	}
	if len(asked) == 0 {
		return fmt.Errorf("%w: no answer to a request with Origin %s; set the request header \"Origin\" first", kit.ErrUsage, o)
	}
	if letIn == "" {
		for _, e := range asked {
			for name, vs := range e.Header {
				if strings.HasPrefix(http.CanonicalHeaderKey(name), "Access-Control-") {
					return fmt.Errorf("WEB-1: %s carries %s: %q, yet no answer lets the origin %s in: a sandbox that does not list an origin sends no Access-Control-* header", answerLine(e), name, strings.Join(vs, ", "), o)
				}
			}
		}
		return nil
	}
	var broken []string
	for _, e := range asked {
		if allowed := e.Header.Get("Access-Control-Allow-Origin"); allowed != o && allowed != "*" {
			broken = append(broken, fmt.Sprintf("%s: Access-Control-Allow-Origin %q, want %q or \"*\" (WEB-2, WEB-3)", answerLine(e), allowed, o))
			continue
		}
		method := e.ReqHeader.Get("Access-Control-Request-Method")
		if e.Method != http.MethodOptions || method == "" {
			exposed := headerList(e.Header, "Access-Control-Expose-Headers")
			for _, name := range exposedToScripts {
				if !slices.Contains(exposed, strings.ToLower(name)) {
					broken = append(broken, fmt.Sprintf("%s: Access-Control-Expose-Headers does not name %s (WEB-3)", answerLine(e), name))
				}
			}
			continue
		}
		if e.Status != http.StatusNoContent {
			broken = append(broken, fmt.Sprintf("%s: a preflight of a listed origin is answered 204 (WEB-2)", answerLine(e)))
		}
		if !slices.Contains(headerList(e.Header, "Access-Control-Allow-Methods"), strings.ToLower(method)) {
			broken = append(broken, fmt.Sprintf("%s: Access-Control-Allow-Methods does not name %s, routed on the path (WEB-2)", answerLine(e), method))
		}
		allowed := headerList(e.Header, "Access-Control-Allow-Headers")
		for _, name := range headerList(e.ReqHeader, "Access-Control-Request-Headers") {
			if !slices.Contains(allowed, name) {
				broken = append(broken, fmt.Sprintf("%s: Access-Control-Allow-Headers does not name %s, which the preflight asked for (WEB-2)", answerLine(e), name))
			}
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("the origin %s is let in (%s answered Access-Control-Allow-Origin), as a sandbox listing it at start-up lets it in; but not wholly:\n  %s\n(a sandbox that lists no origin sends no Access-Control-* header at all, WEB-1)", o, letIn, strings.Join(broken, "\n  "))
	}
	return nil
}

// headerList reads a comma-separated header, every value of it, as lower
// case names.
func headerList(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for _, item := range strings.Split(v, ",") {
			if item = strings.ToLower(strings.TrimSpace(item)); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// answerLine names an exchange by its method, request target and status.
func answerLine(e *wire.Exchange) string {
	target := e.URL
	if u, err := url.Parse(e.URL); err == nil {
		target = u.RequestURI()
	}
	return fmt.Sprintf("%s %s → %d", e.Method, target, e.Status)
}
