package runner

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/cucumber/godog"
	"github.com/cucumber/godog/formatters"
	messages "github.com/cucumber/messages/go/v21"
)

// placingPretty is the name under which the kit registers its pretty
// formatter with godog; Config.Format calls it pretty.
const placingPretty = "conform-pretty"

func init() {
	godog.Format(placingPretty, "godog's pretty formatter, each step placed in its feature file", newPlacedPretty)
}

// placedPretty is godog's pretty formatter with one change. Pretty ends
// each step's line with where the step is defined: the file and line of
// the sc.Step call and the Go function bound to it. Every step of the kit
// is bound in one loop to a method of the scenario's state, so that
// comment would read the same on every line and tell an author nothing.
// placedPretty puts the step's own place in its feature file there, as
// the scenario's header already shows its own: godog hands its formatters
// each feature's Gherkin document and each step with the id of its node
// in that document, which holds the step's line.
type placedPretty struct {
	*godog.PrettyFmt
	out *commentPlacer
	// mu keeps one step's lines together with the places they take, when
	// scenarios run at once.
	mu sync.Mutex
	// written are the steps of the features seen, by their node's id.
	written map[string]writtenStep
}

// writtenStep is a step as its feature file has it.
type writtenStep struct {
	keyword, text string
	line          int
}

func newPlacedPretty(suite string, out io.Writer) godog.Formatter {
	w := &commentPlacer{w: out}
	return &placedPretty{PrettyFmt: godog.NewPrettyFmt(suite, w), out: w, written: map[string]writtenStep{}}
}

// Feature learns where each step of the feature is written, and prints
// the feature's header.
func (f *placedPretty) Feature(doc *messages.GherkinDocument, uri string, content []byte) {
	f.mu.Lock()
	if doc.Feature != nil {
		for _, c := range doc.Feature.Children {
			f.learn(c.Background, c.Scenario)
			if c.Rule != nil {
				for _, rc := range c.Rule.Children {
					f.learn(rc.Background, rc.Scenario)
				}
			}
		}
	}
	f.mu.Unlock()
	f.PrettyFmt.Feature(doc, uri, content)
}

func (f *placedPretty) learn(bg *messages.Background, sc *messages.Scenario) {
	var all []*messages.Step
	if bg != nil {
		all = append(all, bg.Steps...)
	}
	if sc != nil {
		all = append(all, sc.Steps...)
	}
	for _, st := range all {
		f.written[st.Id] = writtenStep{keyword: strings.TrimSpace(st.Keyword), text: st.Text, line: int(st.Location.Line)}
	}
}

// printing runs pretty's printing of step st of pickle p, each step line
// it prints placed. Pretty prints a step as it ends, except in an
// outline, whose steps it prints once, as written, when the first row of
// its examples ends.
func (f *placedPretty) printing(p *messages.Pickle, st *messages.PickleStep, print func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	may := []*messages.PickleStep{st}
	if outline := len(p.AstNodeIds) > 1; outline && len(p.Steps) > 0 && p.Steps[len(p.Steps)-1].Id == st.Id {
		may = p.Steps
	}
	f.out.expect = f.out.expect[:0]
	for _, s := range may {
		if len(s.AstNodeIds) == 0 {
			continue
		}
		if w, ok := f.written[s.AstNodeIds[0]]; ok {
			f.out.expect = append(f.out.expect, placedStep{writtenStep: w, uri: p.Uri})
		}
	}
	print()
	f.out.expect = f.out.expect[:0]
}

func (f *placedPretty) Passed(p *messages.Pickle, st *messages.PickleStep, d *formatters.StepDefinition) {
	f.printing(p, st, func() { f.PrettyFmt.Passed(p, st, d) })
}

func (f *placedPretty) Skipped(p *messages.Pickle, st *messages.PickleStep, d *formatters.StepDefinition) {
	f.printing(p, st, func() { f.PrettyFmt.Skipped(p, st, d) })
}

func (f *placedPretty) Undefined(p *messages.Pickle, st *messages.PickleStep, d *formatters.StepDefinition) {
	f.printing(p, st, func() { f.PrettyFmt.Undefined(p, st, d) })
}

func (f *placedPretty) Failed(p *messages.Pickle, st *messages.PickleStep, d *formatters.StepDefinition, err error) {
	f.printing(p, st, func() { f.PrettyFmt.Failed(p, st, d, err) })
}

func (f *placedPretty) Ambiguous(p *messages.Pickle, st *messages.PickleStep, d *formatters.StepDefinition, err error) {
	f.printing(p, st, func() { f.PrettyFmt.Ambiguous(p, st, d, err) })
}

func (f *placedPretty) Pending(p *messages.Pickle, st *messages.PickleStep, d *formatters.StepDefinition) {
	f.printing(p, st, func() { f.PrettyFmt.Pending(p, st, d) })
}

// placedStep is a step pretty may print now, and its feature file.
type placedStep struct {
	writtenStep
	uri string
}

var (
	ansiRe = regexp.MustCompile("\x1b\\[[0-9;]*m")
	// definitionRe is the comment pretty writes after a step, naming the
	// Go function bound to it.
	definitionRe = regexp.MustCompile(`# [^\s\x1b]+\.go:[0-9]+ -> [^\s\x1b]+`)
)

// commentPlacer passes pretty's output on, each step line's comment
// replaced by the place of the step it prints: the next of the steps
// expected whose keyword and text the line shows. pretty writes each
// line whole, with one Write.
type commentPlacer struct {
	w      io.Writer
	expect []placedStep
}

func (c *commentPlacer) Write(p []byte) (int, error) {
	text := string(p)
	if !definitionRe.MatchString(text) {
		return c.w.Write(p)
	}
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		if definitionRe.MatchString(line) {
			lines[i] = c.place(line)
		}
	}
	if _, err := io.WriteString(c.w, strings.Join(lines, "")); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *commentPlacer) place(line string) string {
	shown := strings.TrimSpace(ansiRe.ReplaceAllString(line, ""))
	for i, s := range c.expect {
		if strings.HasPrefix(shown, s.keyword+" "+s.text+" ") {
			c.expect = c.expect[i+1:]
			return definitionRe.ReplaceAllLiteralString(line, "# "+s.uri+":"+strconv.Itoa(s.line))
		}
	}
	// A step it cannot place loses the comment rather than keep one that
	// points nowhere useful.
	end := ""
	if strings.HasSuffix(line, "\n") {
		end = "\n"
	}
	return strings.TrimRight(definitionRe.ReplaceAllLiteralString(line, ""), " \n") + end
}
