package httpapi

import (
	"bytes"
	"net/http"
	"regexp"
)

// documentServer is the address the embedded document names in servers,
// which each request replaces with the address it reached.
const documentServer = "http://127.0.0.1:8080"

// servableHost is a host and port that can stand in a YAML plain scalar and
// a JSON string as it is: a name, an IPv4 or a bracketed IPv6 address.
var servableHost = regexp.MustCompile(`^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)

// serveDocument serves the OpenAPI document with its servers entry naming
// the address the request reached, so that a client generated from it calls
// the sandbox it came from, on whatever port that listens.
func serveDocument(contentType string, doc []byte) http.Handler {
	before, after, found := bytes.Cut(doc, []byte(documentServer))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		base := baseURL(r)
		if !found || base == "" {
			_, _ = w.Write(doc)
			return
		}
		out := make([]byte, 0, len(doc)+len(base))
		out = append(append(append(out, before...), base...), after...)
		_, _ = w.Write(out)
	})
}

// baseURL is the sandbox's address as the client reached it, or "" when the
// request does not say it plainly enough to repeat.
func baseURL(r *http.Request) string {
	if !servableHost.MatchString(r.Host) {
		return ""
	}
	scheme := "http"
	// Behind a proxy that ends TLS, the client reached https.
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
