package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/toolgate/toolgate/internal/gate"
)

// maxSearchFile is the largest file search reads; larger ones are skipped
// and counted.
const maxSearchFile = 16 << 20

// maxMatchLine is the most of a matching line search prints.
const maxMatchLine = 500

func runSearch(ctx context.Context, x *Executor, c *call) (gate.Result, error) {
	expr := c.str("pattern")
	if c.flag("ignore_case") {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return gate.Result{}, fmt.Errorf("input.pattern: %v", err)
	}
	glob := c.str("glob")
	if glob != "" && !doublestar.ValidatePattern(glob) {
		return gate.Result{}, fmt.Errorf("input.glob: %q is not a valid glob", glob)
	}
	_, root, fi, err := c.statDir()
	if err != nil {
		return gate.Result{}, err
	}
	s := &searcher{root: c.root, re: re, glob: glob, limit: c.num("limit", 500), br: bufio.NewReaderSize(nil, 64<<10)}
	if !fi.IsDir() {
		err = s.file(ctx, root, filepath.Base(root))
	} else {
		err = s.walk(ctx, root)
	}
	if err != nil && !errors.Is(err, errStop) {
		return gate.Result{}, err
	}
	detail := map[string]any{"matches": s.matches, "files": s.files}
	if s.cut {
		detail["truncated"] = true
		fmt.Fprintf(&s.out, "[search cut after %d matches; narrow the pattern or path]\n", s.matches)
	}
	if s.skipped > 0 {
		detail["skippedLarge"] = s.skipped
	}
	return gate.Result{Stdout: s.out.Bytes(), Detail: detail, ExitCode: boolInt(s.matches == 0)}, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

var errStop = errors.New("enough matches")

type searcher struct {
	root    string // every file searched lies in it
	re      *regexp.Regexp
	glob    string
	limit   int
	out     bytes.Buffer
	matches int
	files   int
	skipped int
	cut     bool
	br      *bufio.Reader // reused for every file
}

// walk searches the tree below root in name order, honouring .gitignore
// files and skipping .git. Symbolic links are not followed.
func (s *searcher) walk(ctx context.Context, root string) error {
	ig := &ignorer{}
	var visit func(dir, rel string) error
	visit = func(dir, rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		mark := ig.load(dir, rel)
		defer func() { ig.rules = ig.rules[:mark] }()
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil // unreadable directories are skipped
		}
		for _, e := range entries {
			name := e.Name()
			r := name
			if rel != "" {
				r = rel + "/" + name
			}
			if e.IsDir() {
				if name == ".git" || ig.ignored(r, true) {
					continue
				}
				if err := visit(dir+"/"+name, r); err != nil {
					return err
				}
				continue
			}
			if !e.Type().IsRegular() || ig.ignored(r, false) {
				continue
			}
			if s.glob != "" {
				ok, _ := doublestar.Match(s.glob, path.Base(r))
				if !ok {
					if ok, _ = doublestar.Match(s.glob, r); !ok {
						continue
					}
				}
			}
			if err := s.file(ctx, dir+"/"+name, r); err != nil {
				return err
			}
		}
		return nil
	}
	return visit(root, "")
}

// file searches one file, printing rel:line:text for each matching line.
func (s *searcher) file(ctx context.Context, p, rel string) error {
	f, err := openWithin(s.root, p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	} else if fi.Size() > maxSearchFile {
		s.skipped++
		return nil
	}
	s.files++
	br := s.br
	br.Reset(f)
	defer br.Reset(nil)
	head, _ := br.Peek(sniffBytes)
	if isBinary(head) {
		return nil
	}
	line := 0
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// a very long line: judged on its first part only
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		}
		if len(b) > 0 {
			line++
			if s.re.Match(b) {
				if s.matches >= s.limit || s.out.Len() > MaxOutput {
					s.cut = true
					return errStop
				}
				s.matches++
				text := bytes.TrimRight(b, "\r\n")
				if len(text) > maxMatchLine {
					text = text[:maxMatchLine]
				}
				fmt.Fprintf(&s.out, "%s:%d:%s\n", rel, line, text)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil
		}
		if line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
