package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/testcampaign/kit/conformance/internal/wire"
)

// Steps that walk lists page by page and check filters against them.

// maxPages bounds a walk, so that a cursor that never ends cannot keep the
// kit busy.
const maxPages = 200

// walk follows nextCursor from the first page of target to the last,
// checking on every page that hasMore and nextCursor agree and that no page
// is larger than the limit asked for. It returns the items in order.
func (s *scenarioState) walk(ctx context.Context, target string, limit int) ([]any, error) {
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	base := target + sep + "limit=" + strconv.Itoa(limit)
	var items []any
	cursor := ""
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, fmt.Errorf("list rule: %s still had more after %d pages of %d", target, maxPages, limit)
		}
		p := base
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		e, err := s.send(ctx, http.MethodGet, p, nil, "")
		if err != nil {
			return nil, err
		}
		if e.Status != http.StatusOK {
			return nil, fmt.Errorf("list rule: page %d of %s: want HTTP 200, got %d", page, target, e.Status)
		}
		v, err := e.JSON()
		if err != nil {
			return nil, err
		}
		data, err := wire.Lookup(v, "data")
		if err != nil {
			return nil, err
		}
		pageItems, err := wire.Lookup(data, "items")
		if err != nil {
			return nil, fmt.Errorf("list rule: page %d of %s: %w", page, target, err)
		}
		arr, ok := pageItems.([]any)
		if !ok {
			return nil, fmt.Errorf("list rule: page %d of %s: items must be an array, got %s", page, target, wire.Describe(pageItems))
		}
		if len(arr) > limit {
			return nil, fmt.Errorf("list rule: page %d of %s has %d items, more than limit=%d", page, target, len(arr), limit)
		}
		items = append(items, arr...)
		hasMore, _ := wire.Lookup(data, "hasMore")
		next, _ := wire.Lookup(data, "nextCursor")
		more, ok := hasMore.(bool)
		if !ok {
			return nil, fmt.Errorf("list rule: page %d of %s: hasMore must be a boolean, got %s", page, target, wire.Describe(hasMore))
		}
		nextStr, isStr := next.(string)
		switch {
		case more && (!isStr || nextStr == ""):
			return nil, fmt.Errorf("list rule: page %d of %s: hasMore is true but nextCursor is %s", page, target, wire.Describe(next))
		case !more && next != nil:
			return nil, fmt.Errorf("list rule: page %d of %s: hasMore is false but nextCursor is %s, want null", page, target, wire.Describe(next))
		case more && len(arr) == 0:
			return nil, fmt.Errorf("list rule: page %d of %s is empty but says hasMore", page, target)
		case more && len(arr) < limit:
			return nil, fmt.Errorf("list rule: page %d of %s has %d items, fewer than limit=%d, yet says hasMore", page, target, len(arr), limit)
		}
		if !more {
			return items, nil
		}
		cursor = nextStr
	}
}

// readWalked makes the walked items the response the next steps read, so
// that the JSON steps can check them at "items".
func readWalked(s *scenarioState, target string, items []any) {
	if items == nil {
		items = []any{}
	}
	b, _ := json.Marshal(map[string]any{"items": items})
	s.read = &wire.Exchange{URL: target, Status: http.StatusOK, Header: http.Header{}, Body: b}
}

func idOf(item any) (string, error) {
	v, err := wire.Lookup(item, "id")
	if err != nil {
		return "", err
	}
	id, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("id must be a string, got %s", wire.Describe(v))
	}
	return id, nil
}

// walkComplete walks target page by page and checks the whole list: no item
// twice, newest first, and nothing skipped compared with a single page of
// 100 (when the list fits in one).
func (s *scenarioState) walkComplete(ctx context.Context, target string, limit int) error {
	t, err := s.expandTarget(target)
	if err != nil {
		return err
	}
	items, err := s.walk(ctx, t, limit)
	if err != nil {
		return err
	}
	seen := map[string]int{}
	var ids []string
	for i, it := range items {
		id, err := idOf(it)
		if err != nil {
			return fmt.Errorf("list rule: item %d of %s: %w", i, t, err)
		}
		if j, dup := seen[id]; dup {
			return fmt.Errorf("list rule: %s walked with limit=%d returns %s twice (items %d and %d)", t, limit, id, j, i)
		}
		seen[id] = i
		ids = append(ids, id)
	}
	if err := checkOrder(items, t, "createdAt", true); err != nil {
		return err
	}
	whole, err := s.walk(ctx, t, 100)
	if err != nil {
		return err
	}
	var wholeIDs []string
	for _, it := range whole {
		id, _ := idOf(it)
		wholeIDs = append(wholeIDs, id)
	}
	if strings.Join(ids, ",") != strings.Join(wholeIDs, ",") {
		return fmt.Errorf("list rule: %s walked with limit=%d gives %d items %v, with limit=100 %d items %v", t, limit, len(ids), ids, len(wholeIDs), wholeIDs)
	}
	readWalked(s, t, items)
	return nil
}

// filterExact checks a filter against the whole list: the filtered list
// must be exactly the items of the unfiltered one whose field (the query
// parameter's name unless given) has the value or, for an array field,
// contains it, in the same order.
func (s *scenarioState) filterExact(ctx context.Context, param, value, target, field string) error {
	if field == "" {
		field = param
	}
	t, err := s.expandTarget(target)
	if err != nil {
		return err
	}
	v, err := s.expand(value)
	if err != nil {
		return err
	}
	all, err := s.walk(ctx, t, 100)
	if err != nil {
		return err
	}
	var want []string
	for _, it := range all {
		got, err := wire.Lookup(it, field)
		if err != nil {
			return fmt.Errorf("filter rule: an item of %s has no %q: %w", t, field, err)
		}
		if fieldMatches(got, v) {
			id, _ := idOf(it)
			want = append(want, id)
		}
	}
	sep := "?"
	if strings.Contains(t, "?") {
		sep = "&"
	}
	filtered, err := s.walk(ctx, t+sep+url.QueryEscape(param)+"="+url.QueryEscape(v), 100)
	if err != nil {
		return err
	}
	var got []string
	for i, it := range filtered {
		fv, err := wire.Lookup(it, field)
		if err != nil || !fieldMatches(fv, v) {
			return fmt.Errorf("filter rule: %s=%s returns item %d with %q = %s", param, v, i, field, describeLookup(fv, err))
		}
		id, _ := idOf(it)
		got = append(got, id)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		return fmt.Errorf("filter rule: %s=%s on %s returns %v; the unfiltered list holds %v with that value", param, v, t, got, want)
	}
	readWalked(s, t, filtered)
	return nil
}

func fieldMatches(got any, want string) bool {
	switch g := got.(type) {
	case string:
		return g == want
	case []any:
		for _, x := range g {
			if x == want {
				return true
			}
		}
	case json.Number:
		return wire.NumbersEqual(g, json.Number(want))
	case bool:
		return strconv.FormatBool(g) == want
	}
	return false
}
