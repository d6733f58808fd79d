package conformance

import (
	"io"
	"sync"

	"github.com/cucumber/godog"
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
