package explore

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/testcampaign/kit/conformance/internal/model"
	"github.com/testcampaign/kit/conformance/internal/rules"
	"github.com/testcampaign/kit/conformance/internal/transport"
	"github.com/testcampaign/kit/conformance/internal/wire"
)

// scenarioText prints a finding as a scenario of the kit's own steps, under a
// feature named title. It needs no step of its own to fail: the model
// judges every exchange of a scenario, so replaying the requests is enough.
func scenarioText(title string, f *finding) string {
	var b strings.Builder
	keys := 0
	for _, s := range f.steps {
		keys = max(keys, s.key+1)
	}
	fmt.Fprintf(&b, "Feature: %s\n\n", title)
	fmt.Fprintf(&b, "  @sandbox @writes @%s\n", model.RuleModel)
	fmt.Fprintf(&b, "  Scenario: %s\n", strings.ReplaceAll(f.violation.Rule, "\n", " "))
	for k := 0; k < keys; k++ {
		b.WriteString("    Given a fresh sandbox account\n")
		if keys > 1 {
			fmt.Fprintf(&b, "    And I save \"{key}\" as \"key%d\"\n", k)
		}
	}
	current := keys - 1
	for _, s := range f.steps {
		if keys > 1 && s.key != current {
			fmt.Fprintf(&b, "    When I use the API key \"{key%d}\"\n", s.key)
			current = s.key
		}
		n := max(s.burst, 1)
		for i := 0; i < n; i++ {
			b.WriteString(stepLine(s))
		}
		if s.saveAs != "" {
			fmt.Fprintf(&b, "    And I save the JSON at \"%s\" as \"%s\"\n", s.saveAt, s.saveAs)
		}
	}
	return b.String()
}

func stepLine(s xstep) string {
	if s.body == "" && s.contentType == "" {
		return fmt.Sprintf("    When I send a %s request to \"%s\"\n", s.method, s.path)
	}
	doc := "      \"\"\"\n      " + strings.ReplaceAll(s.body, "\n", "\n      ") + "\n      \"\"\"\n"
	return fmt.Sprintf("    When I send a %s request to \"%s\" with a \"%s\" body:\n%s", s.method, s.path, s.contentType, doc)
}

// writeRepro writes a scenario where --repro-dir asks, as the file name.
func writeRepro(dir, name, scenario string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(scenario), 0o644)
}

// Replay is what a feature scenario the model disagreed with sent, as the
// explorer's steps, for a reproduction when the exploration did not meet
// the same failure.
type Replay struct {
	violation rules.RuleViolation
	steps     []xstep
}

// ReplayOf turns the exchanges a scenario sent into steps: each key it
// used becomes a fresh account of its own, and an ID an answer gave that a
// later request names is saved and named, so that a replay on fresh
// accounts sends the IDs its own answers give. Requests that carry no
// bearer key, or went to another address, are left out: the model judges
// none of them.
func ReplayOf(t *transport.Target, v rules.RuleViolation, sent []*wire.Exchange) Replay {
	keys := map[string]int{}
	var steps []xstep
	var answers []*wire.Exchange
	for _, e := range sent {
		path, ok := strings.CutPrefix(e.URL, t.BaseURL)
		token, bearer := strings.CutPrefix(e.ReqHeader.Get("Authorization"), "Bearer ")
		if !ok || !strings.HasPrefix(path, "/") || !bearer || token == "" {
			continue
		}
		k, seen := keys[token]
		if !seen {
			k = len(keys)
			keys[token] = k
		}
		st := xstep{key: k, method: e.Method, path: path, body: string(e.ReqBody)}
		if st.body != "" {
			st.contentType = e.ReqHeader.Get("Content-Type")
		}
		steps = append(steps, st)
		answers = append(answers, e)
	}
	for i, e := range answers {
		id := answeredID(e)
		if id == "" {
			continue
		}
		name := fmt.Sprintf("r%d", i)
		for j := i + 1; j < len(steps); j++ {
			if strings.Contains(steps[j].path, id) || strings.Contains(steps[j].body, id) {
				steps[i].saveAt, steps[i].saveAs = "data.id", name
				steps[j].path = strings.ReplaceAll(steps[j].path, id, "{"+name+"}")
				steps[j].body = strings.ReplaceAll(steps[j].body, id, "{"+name+"}")
			}
		}
	}
	return Replay{violation: v, steps: steps}
}

// answeredID is the ID a successful answer gave its record, if any.
func answeredID(e *wire.Exchange) string {
	if e.Status != http.StatusOK && e.Status != http.StatusCreated {
		return ""
	}
	doc, err := e.JSON()
	if err != nil {
		return ""
	}
	v, err := wire.Lookup(doc, "data.id")
	id, _ := v.(string)
	if err != nil {
		return ""
	}
	return id
}

// reproDeadline bounds the waits of a reproduction's replays for the
// client address's budget.
const reproDeadline = time.Minute

// Reproduce replays a scenario the model disagreed with on fresh accounts,
// one request at a time, shrinks it as the explorer shrinks its own
// failures, and writes it to dir as model-<rule>.feature. It returns what
// the scenario's message adds: where the reproduction is, or why there is
// none.
func Reproduce(ctx context.Context, t *transport.Target, dir string, r Replay) string {
	x := &explorer{t: t, sandbox: true, pace: newPacer(defaultPace), deadline: time.Now().Add(reproDeadline)}
	f := &finding{violation: r.violation, steps: r.steps}
	if out := x.sequence(ctx, r.steps, true); out.violation != nil && out.violation.Rule == r.violation.Rule {
		f = x.shrink(ctx, out)
	}
	how := "shrunk to the shortest sequence of its requests that still fails"
	if !f.shrunk {
		how = "its requests as they were sent (replayed one at a time on fresh accounts they did not fail again, so they were not shrunk)"
	}
	scenario := t.Redact(scenarioText(fmt.Sprintf("Found by conform's model in a failed scenario (%s)", r.violation.ID), f))
	path, err := writeRepro(dir, fmt.Sprintf("model-%s.feature", r.violation.ID), scenario)
	if err != nil {
		return "(could not write a reproduction: " + err.Error() + ")"
	}
	return fmt.Sprintf("a reproduction, %s (%d requests), written to %s", how, len(f.steps), path)
}
