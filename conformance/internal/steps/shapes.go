package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/cucumber/godog"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// Steps that learn a deployment's shapes instead of assuming the sandbox's:
// the spec shows neither list shapes, nor id forms, nor bug or webhook
// fields, so records are found by walking the answer for objects with a
// string id, and values are taken from what the deployment itself shows.

// records are the objects under v with a string "id", depth first, v
// itself first.
func records(v any) []map[string]any {
	var out []map[string]any
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if id, ok := x["id"].(string); ok && id != "" {
				out = append(out, x)
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return out
}

func (s *scenarioState) recordsAt(path string) ([]map[string]any, error) {
	v, err := valueAt(s, path)
	if err != nil {
		return nil, err
	}
	return records(v), nil
}

// saveRecordField saves a string field of the first record at path that
// has one.
func (s *scenarioState) saveRecordField(ctx context.Context, field, path, name string) error {
	recs, err := s.recordsAt(path)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if v, ok := r[field].(string); ok && v != "" {
			s.saved[name] = v
			return nil
		}
	}
	s.skip = fmt.Sprintf("could not judge: no record with a string id at %q has a string %q (%d records)", path, field, len(recs))
	return godog.ErrSkip
}

// saveUnknownID derives an id of the deployment's own form from a real
// one: a leading word and its separator (cmp_, bug-) stay, every digit d
// becomes 9-d and every letter its mirror within a-f or g-z (hex stays
// hex), so that a deployment checking the form of ids answers for the id.
func (s *scenarioState) saveUnknownID(ctx context.Context, known, name string) error {
	v, ok := s.saved[known].(string)
	if !ok || v == "" {
		return fmt.Errorf("%q holds no id to take the form of (saved: %s)", known, s.savedNames())
	}
	keep := 0
	if i := strings.IndexAny(v, "_-"); i > 0 && strings.Trim(v[:i], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" && i >= 2 && !isHex(v[:i]) {
		keep = i + 1
	}
	out := []byte(v)
	for i := keep; i < len(out); i++ {
		c := out[i]
		switch {
		case c >= '0' && c <= '9':
			out[i] = '9' - (c - '0')
		case c >= 'a' && c <= 'f':
			out[i] = 'f' - (c - 'a')
		case c >= 'A' && c <= 'F':
			out[i] = 'F' - (c - 'A')
		case c >= 'g' && c <= 'z':
			out[i] = 'z' - (c - 'g')
		case c >= 'G' && c <= 'Z':
			out[i] = 'Z' - (c - 'G')
		}
	}
	if string(out) == v {
		return fmt.Errorf("cannot derive an unknown id from %q", v)
	}
	s.saved[name] = string(out)
	return nil
}

func isHex(s string) bool {
	return strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// changeListed changes a record listed at list with PATCH: the field to
// another value some record there shows, trying each such value (its own
// last) until the deployment accepts one. The spec names neither the
// field's values, nor the PATCH body, nor the transitions, so the
// deployment's own data is the only safe source, and a deployment refusing
// every value is not judged.
func (s *scenarioState) changeListed(ctx context.Context, field, list, idName, valueName string) error {
	e, err := s.send(ctx, http.MethodGet, list, nil, "")
	if err != nil {
		return err
	}
	v, err := e.JSON()
	if err != nil || e.Status != http.StatusOK {
		return fmt.Errorf("listing %s to find a record to change: HTTP %d", list, e.Status)
	}
	var with []map[string]any
	var values []string
	for _, r := range records(v) {
		if x, ok := r[field].(string); ok && x != "" {
			with = append(with, r)
			if !slices.Contains(values, x) {
				values = append(values, x)
			}
		}
	}
	if len(with) == 0 {
		s.skip = fmt.Sprintf("could not judge: no record listed at %s shows a string %q to change", list, field)
		return godog.ErrSkip
	}
	pick := with[0]
	own := pick[field].(string)
	candidates := slices.DeleteFunc(slices.Clone(values), func(x string) bool { return x == own })
	candidates = append(candidates, own)
	id := pick["id"].(string)
	var refused []string
	for _, value := range candidates[:min(len(candidates), 4)] {
		body, _ := json.Marshal(map[string]any{field: value})
		e, err := s.send(ctx, http.MethodPatch, strings.TrimRight(list, "/")+"/"+url.PathEscape(id), body, "application/json")
		if err != nil {
			return err
		}
		if e.Status < 400 || e.Status >= 500 || e.Status == http.StatusUnauthorized || e.Status == http.StatusNotFound {
			s.saved[idName], s.saved[valueName] = id, value
			return nil
		}
		refused = append(refused, fmt.Sprintf("%q: %d", value, e.Status))
	}
	s.skip = fmt.Sprintf("could not judge: the deployment refused every %s its data shows for %s (%s)", field, id, strings.Join(refused, ", "))
	return godog.ErrSkip
}

// recordHas checks the record with the given id in the last answer. The
// value is quoted, so it is text: "null" is the string, and a field that
// is JSON null gets a hint at the step that matches it.
func (s *scenarioState) recordHas(ctx context.Context, written, field, want string) error {
	id, err := s.expand(written)
	if err != nil {
		return err
	}
	if want, err = s.expand(want); err != nil {
		return err
	}
	r, err := s.recordWithID(id)
	if err != nil || r == nil {
		return err
	}
	got, ok := r[field]
	switch {
	case !ok:
		return fmt.Errorf("the record %s has no %q; want %q", id, field, want)
	case got == nil && want == "null":
		return fmt.Errorf("the record %s has %q null, not the text \"null\": to match JSON null, write `the record with id %q in the answer should have %q equal to null`", id, field, written, field)
	case got != want:
		return fmt.Errorf("the record %s has %q %s; want %q", id, field, wire.Describe(got), want)
	}
	return nil
}

// recordHasLiteral checks a field of the record with the given id against
// a bare JSON literal: null, a boolean or a number, which recordHas, whose
// value is quoted text, does not match.
func (s *scenarioState) recordHasLiteral(ctx context.Context, id, field, literal string) error {
	want, err := wire.ParseLiteral(literal)
	if err != nil {
		return err
	}
	if id, err = s.expand(id); err != nil {
		return err
	}
	r, err := s.recordWithID(id)
	if err != nil || r == nil {
		return err
	}
	got, ok := r[field]
	if !ok {
		return fmt.Errorf("the record %s has no %q; want %s", id, field, literal)
	}
	if wire.MatchDiff(want, got) != "" {
		return fmt.Errorf("the record %s has %q %s; want %s", id, field, wire.Describe(got), literal)
	}
	return nil
}

func (s *scenarioState) recordListed(ctx context.Context, id string) error {
	id, err := s.expand(id)
	if err != nil {
		return err
	}
	_, err = s.recordWithID(id)
	return err
}

// recordWithID finds a record in the last answer. When it is not there
// and the answer says more pages follow, the kit cannot tell where the
// record is without knowing the deployment's paging, so it does not judge.
func (s *scenarioState) recordWithID(id string) (map[string]any, error) {
	v, err := s.lastJSON(context.Background())
	if err != nil {
		return nil, err
	}
	for _, r := range records(v) {
		if r["id"] == id {
			return r, nil
		}
	}
	if morePages(v) {
		s.skip = fmt.Sprintf("could not judge: the record %s is not on the first page, and the answer says more follow", id)
		return nil, godog.ErrSkip
	}
	return nil, fmt.Errorf("no record with id %q in the answer, which shows %d records and no further page", id, len(records(v)))
}

// morePages says whether a list answer hints that more pages follow, in
// any of the usual shapes: a next cursor or link, hasMore, or a total
// above what it shows.
func morePages(v any) bool {
	m, _ := v.(map[string]any)
	data, _ := m["data"].(map[string]any)
	shown := len(records(data))
	for k, x := range data {
		lk := strings.ToLower(k)
		switch {
		case strings.Contains(lk, "next") || strings.Contains(lk, "cursor"):
			if x != nil && x != "" && x != false {
				return true
			}
		case lk == "hasmore" || lk == "has_more":
			if x == true {
				return true
			}
		case lk == "total" || lk == "totalcount" || lk == "total_count":
			if n, ok := x.(json.Number); ok {
				if t, err := n.Int64(); err == nil && int(t) > shown {
					return true
				}
			}
		}
	}
	return false
}

// webhookBodies are the registration bodies the kit tries in turn: the
// spec shows no body fields, so the receiver's address goes under each
// usual name;
// "events" with the common wildcard is tried too, for deployments that
// want the events named.
var webhookBodies = []func(address string) map[string]any{
	func(a string) map[string]any { return map[string]any{"url": a} },
	func(a string) map[string]any { return map[string]any{"url": a, "events": []string{"*"}} },
	func(a string) map[string]any { return map[string]any{"callbackUrl": a} },
	func(a string) map[string]any { return map[string]any{"endpoint": a} },
}

// registerReceiver registers conform's receiver as a webhook with the
// first body the deployment accepts. A deployment refusing every one is
// not judged: the spec shows no body fields.
func (s *scenarioState) registerReceiver(ctx context.Context) error {
	var refused []string
	for _, shape := range webhookBodies {
		fields := shape(s.hookURL())
		body, _ := json.Marshal(fields)
		e, err := s.send(ctx, http.MethodPost, "/v1/webhooks", body, "application/json")
		if err != nil {
			return err
		}
		if e.Status < 400 || e.Status >= 500 || e.Status == http.StatusUnauthorized {
			return nil
		}
		refused = append(refused, fmt.Sprintf("%s: %d", wire.KeysOf(fields), e.Status))
	}
	s.skip = "could not judge: the deployment refused every registration body the kit knows (" + strings.Join(refused, ", ") + ")"
	return godog.ErrSkip
}
