package runner

import (
	"io"
	"sync"

	"github.com/cucumber/godog"
	messages "github.com/cucumber/messages/go/v21"
)

// cucumberFormat is a godog formatter that writes godog's own cucumber JSON
// to the writer registered for the suite. godog opens report files itself
// and would bypass redaction; routing through the registry keeps the key
// out of the file.
const cucumberFormat = "conform-cucumber"

// cucumberWriters maps a suite name to the writer of its cucumber report.
var cucumberWriters sync.Map

// godog's formatter registry is a plain map that every run reads, so the
// formatter is registered once, before any run can start.
func init() {
	godog.Format(cucumberFormat, "cucumber JSON through the kit's redaction", func(suite string, out io.Writer) godog.Formatter {
		if w, ok := cucumberWriters.Load(suite); ok {
			out = w.(io.Writer)
		}
		return godog.FindFmt(FormatCucumber)(suite, out)
	})
}

func registerCucumber(suite string, w io.Writer) string {
	cucumberWriters.Store(suite, w)
	return cucumberFormat
}

func unregisterCucumber(suite string) { cucumberWriters.Delete(suite) }

// indexFormat is a silent godog formatter that hands godog's own parsed
// documents to the run's recorder, so that results keyed by godog's pickle
// ids can be placed at their file and line.
const indexFormat = "conform-index"

// IndexRecorders maps a suite name to the recorder of its run.
var IndexRecorders sync.Map

func init() {
	godog.Format(indexFormat, "the kit's index of godog's documents", func(suite string, out io.Writer) godog.Formatter {
		f := &indexFormatter{BaseFmt: godog.NewBaseFmt(suite, io.Discard)}
		if r, ok := IndexRecorders.Load(suite); ok {
			f.rec = r.(*recorder)
		}
		return f
	})
}

type indexFormatter struct {
	*godog.BaseFmt
	rec *recorder
}

func (f *indexFormatter) Feature(doc *messages.GherkinDocument, _ string, _ []byte) {
	if f.rec != nil {
		f.rec.document(doc)
	}
}

// Summary is silent: the kit writes its own.
func (f *indexFormatter) Summary() {}

func registerIndex(suite string, r *recorder) string {
	r.suite = suite
	IndexRecorders.Store(suite, r)
	return indexFormat
}

func unregisterIndex(r *recorder) { IndexRecorders.Delete(r.suite) }
