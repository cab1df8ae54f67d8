// SPDX-License-Identifier: Apache-2.0
// Package tap is a minimal TAP version 13 producer with the API of
// github.com/mndrix/tap-go, which the runtime-tools validation programs import
// but Debian does not package. build.sh places it at that import path.
package tap

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// T writes one TAP stream. Copies made by Todo share the test counter.
type T struct {
	Writer   io.Writer
	TODO     bool
	lastTest *int
}

// New returns a producer writing to standard output.
func New() *T {
	return &T{Writer: os.Stdout, lastTest: new(int)}
}

func (t *T) printf(format string, args ...interface{}) {
	fmt.Fprintf(t.Writer, format, args...)
}

// Header prints the version line and, when the count is known, the plan.
func (t *T) Header(testCount int) {
	t.printf("TAP version 13\n")
	if testCount > 0 {
		t.printf("1..%d\n", testCount)
	}
}

// Ok records one test point.
func (t *T) Ok(passed bool, description string) {
	*t.lastTest++
	status := "ok"
	if !passed {
		status = "not ok"
	}
	directive := ""
	if t.TODO {
		directive = " # TODO"
	}
	t.printf("%s %d - %s%s\n", status, *t.lastTest, description, directive)
}

// Pass records a passing test point.
func (t *T) Pass(description string) { t.Ok(true, description) }

// Fail records a failing test point.
func (t *T) Fail(description string) { t.Ok(false, description) }

// Skip records count skipped test points.
func (t *T) Skip(count int, description string) {
	for i := 0; i < count; i++ {
		*t.lastTest++
		t.printf("ok %d # SKIP %s\n", *t.lastTest, description)
	}
}

// Todo returns a producer whose test points carry the TODO directive.
func (t *T) Todo() *T {
	todo := *t
	todo.TODO = true
	return &todo
}

// Count is the number of test points recorded so far.
func (t *T) Count() int { return *t.lastTest }

// AutoPlan prints the plan for the test points recorded so far.
func (t *T) AutoPlan() { t.printf("1..%d\n", t.Count()) }

// Diagnostic prints a comment; each line of message gets its own "# ".
func (t *T) Diagnostic(message string) {
	t.printf("# %s\n", strings.ReplaceAll(message, "\n", "\n# "))
}

// Diagnosticf is Diagnostic with formatting.
func (t *T) Diagnosticf(format string, args ...interface{}) {
	t.Diagnostic(fmt.Sprintf(format, args...))
}

// YAML prints a YAML block after the last test point. JSON is valid YAML,
// so the standard library's encoder is enough.
func (t *T) YAML(message interface{}) error {
	encoded, err := json.MarshalIndent(message, "  ", "  ")
	if err != nil {
		return err
	}
	t.printf("  ---\n  %s\n  ...\n", encoded)
	return nil
}
