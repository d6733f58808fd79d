package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Lookup follows a dotted path ("data.items.0.id", "data.items[0].id") from
// the root of a decoded JSON document. The empty path and "$" mean the root.
func Lookup(root any, path string) (any, error) {
	path = strings.TrimPrefix(strings.TrimPrefix(path, "$"), ".")
	if path == "" {
		return root, nil
	}
	path = strings.NewReplacer("[", ".", "]", "").Replace(path)
	cur := root
	walked := ""
	for _, seg := range strings.Split(path, ".") {
		here := seg
		if walked != "" {
			here = walked + "." + seg
		}
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil, fmt.Errorf("%q is missing (keys at %s: %s)", here, orRoot(walked), KeysOf(v))
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				return nil, fmt.Errorf("%s is an array; %q is not an index", orRoot(walked), seg)
			}
			if i < 0 || i >= len(v) {
				return nil, fmt.Errorf("%q is missing: %s has %d item(s)", here, orRoot(walked), len(v))
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("%q is missing: %s is %s, not an object or array", here, orRoot(walked), Describe(cur))
		}
		walked = here
	}
	return cur, nil
}

func orRoot(p string) string {
	if p == "" {
		return "the top level"
	}
	return fmt.Sprintf("%q", p)
}

// KeysOf lists the keys of m, sorted, for a message; "none" when empty.
func KeysOf(m map[string]any) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, ", ")
}

// jsonType names the JSON type of a decoded value; json.Number is split into
// "integer" and "number" because the spec distinguishes them.
func jsonType(v any) string {
	switch n := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if IsIntegerLiteral(string(n)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

var integerRe = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// IsIntegerLiteral accepts only literals without fraction or exponent, so that
// clients decoding into integer types never meet 401.0 or 4.01e2.
func IsIntegerLiteral(s string) bool { return integerRe.MatchString(s) }

// Describe shows a value and its type for messages such as
// `want an integer, got string "12"`.
func Describe(v any) string {
	b, _ := json.Marshal(v)
	return fmt.Sprintf("%s %s", jsonType(v), Truncate(string(b), 120))
}

// IsType reports whether v has the named type. "number" includes integers, and
// "timestamp" is a string in ISO 8601 date-time form.
func IsType(v any, typ string) bool {
	switch typ {
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "timestamp":
		s, ok := v.(string)
		return ok && isTimestamp(s)
	}
	return jsonType(v) == typ
}

// timestampLayouts are ISO 8601 date-times in its extended and basic
// formats, the spec's only word on timestamps (§2): seconds with or without
// a fraction, or minutes; a zone as Z, hours, hours and minutes, or none.
var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04",
	"20060102T150405.999999999Z0700",
	"20060102T150405.999999999Z07",
	"20060102T150405.999999999",
	"20060102T1504Z0700",
	"20060102T1504",
}

// isTimestamp accepts every ISO 8601 date-time form: the three-digit
// RFC 3339 form is the sandbox's own choice (ENV-11, a @sandbox rule).
func isTimestamp(s string) bool {
	_, err := ParseTimestamp(s)
	return err == nil
}

// ParseTimestamp parses the ISO 8601 date-time forms a JSON API plausibly
// uses: RFC 3339, a numeric offset without colon, or no zone at all.
func ParseTimestamp(s string) (time.Time, error) {
	var err error
	for _, l := range timestampLayouts {
		var t time.Time
		if t, err = time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// PlaceholderChecks are the "<…>" strings a `should match:` document may use
// where the value cannot be known in advance.
var PlaceholderChecks = map[string]func(any) bool{
	"<any>":       func(any) bool { return true },
	"<string>":    func(v any) bool { return IsType(v, "string") },
	"<id>":        func(v any) bool { s, ok := v.(string); return ok && s != "" },
	"<timestamp>": func(v any) bool { return IsType(v, "timestamp") },
	"<integer>":   func(v any) bool { return IsType(v, "integer") },
	"<number>":    func(v any) bool { return IsType(v, "number") },
	"<boolean>":   func(v any) bool { return IsType(v, "boolean") },
	"<object>":    func(v any) bool { return IsType(v, "object") },
	"<array>":     func(v any) bool { return IsType(v, "array") },
	"<string|null>": func(v any) bool {
		return v == nil || IsType(v, "string")
	},
}

// PlaceholderNames lists the placeholders `should match:` understands.
func PlaceholderNames() []string {
	names := make([]string, 0, len(PlaceholderChecks))
	for n := range PlaceholderChecks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MatchDiff compares actual with an expected document that may hold
// placeholders. Objects match if every expected key matches (extra keys are
// allowed, since the spec describes fields as "at least"); arrays must match
// item by item. It returns the difference as JSON lines, "-" for what was
// wanted and "+" for what came, empty on a match.
func MatchDiff(want, got any) string {
	shown := project(want, got)
	if cmp.Equal(want, shown) {
		return ""
	}
	return jsonLineDiff(want, shown)
}

// jsonLineDiff shows two JSON documents as indented JSON, line by line,
// common lines unmarked: the language the author wrote the expectation in.
func jsonLineDiff(want, got any) string {
	a, b := JSONLines(want), JSONLines(got)
	// lcs[i][j] is the longest common run of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out.WriteString("- " + a[i] + "\n")
			i++
		default:
			out.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return out.String()
}

// JSONLines is v as indented JSON, one line per element, for a diff.
func JSONLines(v any) []string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return []string{fmt.Sprint(v)}
	}
	return strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
}

// project reshapes got to look like want wherever they agree, so that the diff
// shows only the disagreements: matched placeholders are replaced by the
// placeholder itself, equal numbers by want's spelling, and keys want does not
// mention are dropped.
func project(want, got any) any {
	switch w := want.(type) {
	case string:
		if check, ok := PlaceholderChecks[w]; ok && check(got) {
			return w
		}
		return got
	case json.Number:
		if g, ok := got.(json.Number); ok && NumbersEqual(w, g) {
			return w
		}
		return got
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return got
		}
		out := make(map[string]any, len(w))
		for k, wv := range w {
			if gv, ok := g[k]; ok {
				out[k] = project(wv, gv)
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok {
			return got
		}
		out := make([]any, len(g))
		for i := range g {
			if i < len(w) {
				out[i] = project(w[i], g[i])
			} else {
				out[i] = g[i]
			}
		}
		return out
	}
	return got
}

// NumbersEqual compares JSON numbers by value, so 20 and 20.0 agree while
// 19.99 and 19.990001 do not.
func NumbersEqual(a, b json.Number) bool {
	x, ok1 := new(big.Rat).SetString(string(a))
	y, ok2 := new(big.Rat).SetString(string(b))
	return ok1 && ok2 && x.Cmp(y) == 0
}

// ParseLiteral reads a JSON literal written in a step.
func ParseLiteral(s string) (any, error) {
	v, err := DecodeJSON([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("%q is not a JSON literal: %w", s, err)
	}
	return v, nil
}
