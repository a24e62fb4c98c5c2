package risk

import (
	"strings"
)

// A sed script is parsed into its commands, as GNU sed reads them:
// addresses, then one command with its arguments. It only edits text when
// every command is known and none runs a command (e, s///e), writes a file
// (w, W, s///w) or reads one (r, R: reported as reads). Where seds could
// read the text differently (a bracket expression holding the delimiter),
// the script is unknown.

type sedParser struct {
	src string
	i   int
	p   ProgramEffect
}

func (s *sedParser) eof() bool { return s.i >= len(s.src) }

func (s *sedParser) peek() byte {
	if s.eof() {
		return 0
	}
	return s.src[s.i]
}

func (s *sedParser) skipBlanks() {
	for !s.eof() && (s.src[s.i] == ' ' || s.src[s.i] == '\t' || s.src[s.i] == '\r') {
		s.i++
	}
}

// delimited reads text up to the unescaped delimiter d and past it. A
// regular expression whose bracket expression is not closed within the
// text is refused: some seds read the delimiter inside brackets as a
// character of the set.
func (s *sedParser) delimited(d byte, regex bool) (string, string) {
	start := s.i
	for !s.eof() {
		c := s.src[s.i]
		switch {
		case c == '\\':
			if s.i+1 >= len(s.src) {
				return "", "a backslash ends the script"
			}
			s.i += 2
		case c == '\n':
			return "", "a newline inside a regular expression or replacement"
		case c == d:
			body := s.src[start:s.i]
			s.i++
			if regex && !bracketsClosed(body) {
				return "", "a bracket expression holds the delimiter " + string(d) + ", which seds read differently"
			}
			return body, ""
		default:
			s.i++
		}
	}
	return "", "a regular expression or replacement is not closed"
}

// bracketsClosed reports whether every bracket expression of a regular
// expression closes within it.
func bracketsClosed(re string) bool {
	for i := 0; i < len(re); i++ {
		switch re[i] {
		case '\\':
			i++
		case '[':
			j := i + 1
			if j < len(re) && re[j] == '^' {
				j++
			}
			if j < len(re) && re[j] == ']' {
				j++
			}
			for j < len(re) && re[j] != ']' {
				if re[j] == '[' && j+1 < len(re) && strings.IndexByte(":.=", re[j+1]) >= 0 {
					end := strings.Index(re[j+2:], string(re[j+1])+"]")
					if end < 0 {
						return false
					}
					j += 2 + end + 2
					continue
				}
				j++
			}
			if j >= len(re) {
				return false
			}
			i = j
		}
	}
	return true
}

// address reads one address, if there is one: a line number (with ~step),
// $, or a regular expression /re/ or \cREc with its I and M flags.
func (s *sedParser) address(second bool) string {
	c := s.peek()
	switch {
	case c >= '0' && c <= '9' || second && (c == '+' || c == '~'):
		s.i++
		for !s.eof() && (s.peek() >= '0' && s.peek() <= '9' || s.peek() == '~') {
			s.i++
		}
	case c == '$':
		s.i++
	case c == '/' || c == '\\':
		d := byte('/')
		if c == '\\' {
			if s.i+1 >= len(s.src) || s.src[s.i+1] == '\n' || s.src[s.i+1] == '\\' {
				return "a \\ address without its delimiter"
			}
			d = s.src[s.i+1]
			s.i++
		}
		s.i++
		if _, bad := s.delimited(d, true); bad != "" {
			return bad
		}
		for !s.eof() && (s.peek() == 'I' || s.peek() == 'M') {
			s.i++
		}
	}
	return ""
}

// toEOL returns the rest of the line, past its newline.
func (s *sedParser) toEOL() string {
	start := s.i
	for !s.eof() && s.src[s.i] != '\n' {
		s.i++
	}
	line := s.src[start:s.i]
	if !s.eof() {
		s.i++
	}
	return line
}

// endCmd checks that a command ends here: a newline, ;, }, # or the end.
func (s *sedParser) endCmd(cmd byte) string {
	s.skipBlanks()
	if s.eof() || strings.IndexByte("\n;}#", s.peek()) >= 0 {
		return ""
	}
	return "extra characters after the " + strings.ToValidUTF8(string(cmd), "?") + " command"
}

// label reads a label as GNU sed does: up to a blank or a semicolon, and
// a closing brace, so that nothing a sed runs is taken for a label.
func (s *sedParser) label() {
	s.skipBlanks()
	for !s.eof() && strings.IndexByte(" \t\r\n;}", s.peek()) < 0 {
		s.i++
	}
}

// fileArg reads the file name of r, R, w, W and s///w: the rest of the
// line.
func (s *sedParser) fileArg(cmd string, write bool) string {
	s.skipBlanks()
	name := s.toEOL()
	if name == "" {
		return cmd + " lacks its file name"
	}
	switch {
	case specialStream(name):
	case write:
		s.p.Writes = append(s.p.Writes, name)
	default:
		s.p.Reads = append(s.p.Reads, name)
	}
	return ""
}

// parse reads the whole script and returns why it cannot, or "".
func (s *sedParser) parse() string {
	depth := 0
	for {
		for !s.eof() && strings.IndexByte(" \t\r\n;", s.peek()) >= 0 {
			s.i++
		}
		if s.eof() {
			break
		}
		if s.peek() == '#' {
			s.toEOL()
			continue
		}
		if bad := s.address(false); bad != "" {
			return bad
		}
		s.skipBlanks()
		if s.peek() == ',' {
			s.i++
			s.skipBlanks()
			if bad := s.address(true); bad != "" {
				return bad
			}
		}
		s.skipBlanks()
		for s.peek() == '!' {
			s.i++
			s.skipBlanks()
		}
		if s.eof() {
			return "an address without a command"
		}
		cmd := s.src[s.i]
		s.i++
		switch cmd {
		case '{':
			depth++
			continue
		case '}':
			if depth--; depth < 0 {
				return "a } without its {"
			}
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'q', 'Q', 'L':
			s.skipBlanks()
			for !s.eof() && s.peek() >= '0' && s.peek() <= '9' {
				s.i++
			}
		case 'b', 't', 'T', ':', 'v':
			s.label()
		case 'a', 'i', 'c':
			// Text to the end of the line; a backslash before a newline
			// goes on to the next. As in GNU sed, the character after
			// a\ is taken as it is: a newline (the text starts on the
			// next line) or the first character of the text, even a
			// backslash.
			s.skipBlanks()
			if s.peek() == '\\' {
				s.i++
				if !s.eof() {
					s.i++
				}
			}
			for !s.eof() && s.src[s.i] != '\n' {
				if s.src[s.i] == '\\' {
					s.i++
				}
				s.i++
			}
			continue
		case 'r', 'R':
			if bad := s.fileArg(string(cmd), false); bad != "" {
				return bad
			}
			continue
		case 'w', 'W':
			if bad := s.fileArg(string(cmd), true); bad != "" {
				return bad
			}
			continue
		case 'e':
			s.p.exec("the e command runs a shell command")
			s.toEOL()
			continue
		case 's', 'y':
			if s.eof() || s.peek() == '\n' || s.peek() == '\\' {
				return "the " + string(cmd) + " command lacks its delimiter"
			}
			d := s.src[s.i]
			s.i++
			if _, bad := s.delimited(d, cmd == 's'); bad != "" {
				return bad
			}
			if _, bad := s.delimited(d, false); bad != "" {
				return bad
			}
			if cmd == 's' {
				done, tookLine := false, false
				for !s.eof() && !done {
					switch f := s.peek(); {
					case f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || f >= '0' && f <= '9':
						s.i++
					case f == 'e':
						s.p.exec("the s///e flag runs the pattern space as a shell command")
						s.i++
					case f == 'w':
						s.i++
						if bad := s.fileArg("s///w", true); bad != "" {
							return bad
						}
						done, tookLine = true, true
					default:
						done = true
					}
				}
				if tookLine {
					continue // s///w took the rest of the line
				}
			}
		default:
			return "the command " + strings.ToValidUTF8(string(cmd), "?") + " is not known"
		}
		if bad := s.endCmd(cmd); bad != "" {
			return bad
		}
	}
	if depth != 0 {
		return "a { without its }"
	}
	return ""
}

// SedScript returns what a sed script does, read from its text.
func SedScript(script string) ProgramEffect {
	s := &sedParser{src: script}
	if bad := s.parse(); bad != "" {
		s.p.unknown("cannot read the sed script: " + bad)
	}
	return s.p
}

// sedCommand fills e for sed run with args: the files it reads or edits in
// place, and what its script does.
func sedCommand(args []string, dyn []bool, e *Effect) {
	e.Level, e.Reads, e.Writes, e.Unknown = Read, nil, nil, false
	var p ProgramEffect
	opts, ops, bad := scanOpts("sed", args, dyn)
	if bad != "" {
		p.unknown(bad)
	}
	var pieces []string
	fromFile, inPlace := false, false
	for _, o := range opts {
		switch o.name {
		case "-e", "--expression":
			if o.dyn {
				p.unknown("the script is not known until the line runs")
			}
			pieces = append(pieces, o.val)
		case "-f", "--file":
			fromFile = true
			if o.val != "-" {
				p.Reads = append(p.Reads, o.val)
			}
			p.unknown("the script is read from " + o.val + ", which the analysis does not read")
		case "-i", "--in-place":
			inPlace = true
		}
	}
	if len(pieces) == 0 && !fromFile {
		if len(ops) == 0 {
			p.unknown("no script is given")
		} else {
			if ops[0] < len(dyn) && dyn[ops[0]] {
				p.unknown("the script is not known until the line runs")
			}
			pieces = append(pieces, args[ops[0]])
			ops = ops[1:]
			if inPlace && pieces[0] == "" && len(ops) > 0 {
				// BSD sed reads -i '' as an empty backup suffix, and the
				// word after it as the script: judge that reading too.
				if ops[0] < len(dyn) && dyn[ops[0]] {
					p.unknown("the script is not known until the line runs")
				} else {
					p.merge(SedScript(args[ops[0]]))
				}
			}
		}
	}
	if len(pieces) > 0 {
		p.merge(SedScript(strings.Join(pieces, "\n")))
	}
	for _, k := range ops {
		if k < len(dyn) && dyn[k] {
			e.Unknown = true
			continue
		}
		switch a := args[k]; {
		case inPlace:
			e.Writes = append(e.Writes, a)
		case a != "-":
			e.Reads = append(e.Reads, a)
		}
	}
	if inPlace {
		e.Level = max(e.Level, Write)
	}
	p.apply("sed", e)
}
