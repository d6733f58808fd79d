// Package wire holds what every part of the kit speaks: one exchange of a
// request and its answer, JSON decoded with numbers as written, dotted JSON
// paths and the values they find, timestamps, key redaction, and the kinds
// of error that mean the kit could not judge.
package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
	"unicode/utf8"
)

// Exchange is one request and its response, kept so that later steps can
// check it and the report can show what was sent and what came back.
type Exchange struct {
	Method    string
	URL       string
	ReqHeader http.Header
	ReqBody   []byte
	Status    int
	Header    http.Header
	Body      []byte
	// BodyCut is set when the deployment sent more than MaxBody.
	BodyCut bool
	// NoAnswer, when set, says how the connection was dropped before an
	// answer came: Status is 0 then.
	NoAnswer string
	// GaveUp is set when the client stopped waiting and closed the
	// connection itself; NoAnswer says so, and no fault dropped anything.
	GaveUp bool
	// Sent is when the request went out, and Elapsed the time from then to
	// the end of the answer: between them the server handled it.
	Sent       time.Time
	Elapsed    time.Duration
	parsed     any
	parseErr   error
	parseTried bool
}

// JSON returns the decoded body, numbers kept as json.Number so that integers,
// decimals and their exact spelling can be told apart.
func (e *Exchange) JSON() (any, error) {
	if !e.parseTried {
		e.parseTried = true
		e.parsed, e.parseErr = DecodeJSON(e.Body)
	}
	return e.parsed, e.parseErr
}

// DecodeJSON decodes one JSON value, numbers kept as json.Number so that
// their spelling can be judged, and refuses trailing data after it.
func DecodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("body is not JSON: trailing data after the first value")
	}
	return v, nil
}

// RandomToken is 16 random hex digits, for fresh keys and values that must
// not collide between runs.
func RandomToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Truncate cuts s to at most n bytes, marking the cut, never inside a
// character.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut at a character boundary: half a character is not text.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// MaxBody bounds what the kit reads of one body, in every profile, so that
// a deployment streaming without end cannot exhaust its memory. No answer
// of the API comes near it; a body cut there is said so in the report.
const MaxBody = 1 << 20

// ReadBody reads at most MaxBody bytes of r and says whether there was more.
func ReadBody(r io.Reader) (b []byte, cut bool, err error) {
	b, err = io.ReadAll(io.LimitReader(r, MaxBody+1))
	if len(b) > MaxBody {
		return b[:MaxBody], true, err
	}
	return b, false, err
}

// CutNote is how a report says that a body was cut.
const CutNote = "(cut: the kit reads at most 1 MiB of a body)"
