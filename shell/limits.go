package shell

import (
	"errors"
	"fmt"
)

// ErrTooComplex is wrapped by the error Analyze returns when a line is
// too large or too deeply nested to analyze within its limits. Such a line
// cannot be judged and must not run on the analysis's say-so.
var ErrTooComplex = errors.New("too complex to analyze")

const (
	// maxSource is the longest line Analyze parses. Parsing costs about a
	// microsecond for every few bytes of code, so a longer line is refused
	// before any work is done on it.
	maxSource = 64 << 10
	// maxBracketDepth bounds how deeply brackets may nest in a line, counted
	// over its raw text before parsing: the parser recurses once for each
	// level, so this also bounds its stack.
	maxBracketDepth = 512
	// maxCommands is how many commands one line may report.
	maxCommands = 2000
	// workPerByte and workBase make the budget of one analysis: the steps
	// (syntax nodes visited, bytes parsed, words produced) it may take are
	// workBase plus workPerByte for every byte of the line.
	workPerByte = 8
	workBase    = 1 << 16
	// checkEvery is how many steps pass between two looks at the context.
	checkEvery = 4096
)

// tooComplex returns an error wrapping ErrTooComplex.
func tooComplex(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrTooComplex, fmt.Sprintf(format, args...))
}

// precheck refuses a line that is too long, or whose brackets nest too
// deeply, before the parser sees it. Brackets are counted in the raw text,
// quoted or not: that over-counts text in quotes, which only refuses lines
// no one writes. Keywords (if, while, case) and stray closing brackets can
// nest statements without counted brackets, but only a few thousand levels
// fit in maxSource bytes, and backquotes nest only as deep as their
// doubling backslashes allow.
func precheck(src string) error {
	if len(src) > maxSource {
		return tooComplex("the line is %d bytes long; at most %d bytes are analyzed", len(src), maxSource)
	}
	depth, deepest := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			if depth > deepest {
				deepest = depth
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	if deepest > maxBracketDepth {
		return tooComplex("brackets are nested %d levels deep; at most %d are analyzed", deepest, maxBracketDepth)
	}
	return nil
}

// charge counts n steps of work against the budget of the analysis and
// stops it when the budget is spent or the context is done. It reports
// whether the analysis may go on.
func (a *analyzer) charge(n int) bool {
	if a.err != nil {
		return false
	}
	a.work += n
	if a.work > a.budget {
		a.err = tooComplex("the analysis of the line needs more than %d steps", a.budget)
		return false
	}
	if a.work >= a.nextCheck {
		a.nextCheck = a.work + checkEvery
		if a.ctx != nil {
			if err := a.ctx.Err(); err != nil {
				a.err = fmt.Errorf("analysis stopped: %w", err)
				return false
			}
		}
	}
	return true
}

// budgetFor returns the work budget of a line of n bytes.
func budgetFor(n int) int { return workBase + workPerByte*n }
