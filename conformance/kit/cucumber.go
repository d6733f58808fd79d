package kit

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The cucumber JSON report, in the shape godog's cucumber formatter writes
// and CI plugins read: features, their scenarios ("elements") and steps.
type cucumberFeature struct {
	URI         string            `json:"uri"`
	ID          string            `json:"id"`
	Keyword     string            `json:"keyword"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Line        int               `json:"line"`
	Elements    []cucumberElement `json:"elements"`
}

type cucumberElement struct {
	ID          string         `json:"id"`
	Keyword     string         `json:"keyword"`
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Line        int            `json:"line"`
	Type        string         `json:"type"`
	Tags        []cucumberTag  `json:"tags,omitempty"`
	Steps       []cucumberStep `json:"steps"`
}

type cucumberTag struct {
	Name string `json:"name"`
	Line int    `json:"line"`
}

type cucumberStep struct {
	Keyword string         `json:"keyword"`
	Name    string         `json:"name"`
	Line    int            `json:"line"`
	Result  cucumberResult `json:"result"`
}

type cucumberResult struct {
	Status   string `json:"status"`
	Error    string `json:"error_message,omitempty"`
	Duration int64  `json:"duration,omitempty"`
}

// WriteCucumber writes the results as cucumber JSON. Like the junit report
// it is written from the results, so it agrees with the exit code: a
// scenario that failed on a rule of every response fails at the step whose
// exchange broke it, the explorer's finding is a failed scenario of its
// own, and a run that stopped holds one failed scenario saying why.
// Scenarios the run left out (disabled, or skipped before they started)
// are not listed, as godog lists no scenario a tag expression leaves out.
func (r *Report) WriteCucumber(w io.Writer) error {
	var features []cucumberFeature
	index := map[string]int{}
	featureOf := func(uri, name string) *cucumberFeature {
		i, ok := index[uri]
		if !ok {
			i = len(features)
			index[uri] = i
			features = append(features, cucumberFeature{URI: uri, ID: cucumberID(name), Keyword: "Feature", Name: name, Line: 1, Elements: []cucumberElement{}})
		}
		return &features[i]
	}
	if r.Stopped != "" {
		f := featureOf("conform", "conform")
		f.Elements = append(f.Elements, cucumberElement{
			ID: "conform;the-run", Keyword: "Scenario", Name: "the run", Line: 1, Type: "scenario",
			Steps: []cucumberStep{{Keyword: "Then ", Name: "the run judges every selected scenario", Line: 1,
				Result: cucumberResult{Status: "failed", Error: r.Stopped}}},
		})
	}
	for _, s := range r.Scenarios {
		if s.Status == Disabled || (s.Status == Skipped && len(s.Steps) == 0) {
			continue
		}
		f := featureOf(s.URI, s.Feature)
		e := cucumberElement{ID: f.ID + ";" + cucumberID(s.Name), Keyword: "Scenario", Name: s.Name, Line: s.Line, Type: "scenario", Steps: []cucumberStep{}}
		for _, t := range s.Tags {
			e.Tags = append(e.Tags, cucumberTag{Name: t, Line: s.Line})
		}
		for _, st := range s.Steps {
			res := cucumberResult{Status: st.Status, Error: st.Error, Duration: st.Duration.Nanoseconds()}
			if s.Status == Warned && st.Status == "failed" {
				// A @should failure does not fail the run, so it does not
				// fail the report either; the warning stays readable.
				res.Status, res.Error = "passed", "WARNING (@should; --strict makes this a failure): "+st.Error
			}
			e.Steps = append(e.Steps, cucumberStep{Keyword: st.Keyword, Name: st.Text, Line: st.Line, Result: res})
		}
		if len(s.Steps) == 0 {
			// A scenario with no steps of its own (the explorer's) shows its
			// verdict as one step.
			e.Steps = append(e.Steps, cucumberStep{Keyword: "Then ", Name: s.verdictStep(), Line: s.Line,
				Result: cucumberResult{Status: cucumberStatus(s.Status), Error: s.Message, Duration: s.Duration.Nanoseconds()}})
		}
		f.Elements = append(f.Elements, e)
	}
	if features == nil {
		features = []cucumberFeature{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "    ")
	if err := enc.Encode(features); err != nil {
		return fmt.Errorf("writing cucumber JSON: %w", err)
	}
	return nil
}

func (s ScenarioResult) verdictStep() string {
	if s.FailedStep != "" {
		return s.FailedStep
	}
	return s.Name
}

// cucumberStatus is a scenario's outcome in cucumber's words. A warning is
// a pass there, as in the exit code.
func cucumberStatus(st Status) string {
	switch st {
	case Failed, Errored:
		return "failed"
	case Skipped, Disabled:
		return "skipped"
	}
	return "passed"
}

// cucumberID is cucumber's id of a name: lower case, dashes for spaces.
func cucumberID(name string) string {
	return strings.ReplaceAll(strings.ToLower(name), " ", "-")
}
