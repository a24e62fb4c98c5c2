package injection

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalized is text folded for matching: lower-cased, compatibility
// forms folded (full-width and mathematical letters become ASCII,
// accents are dropped), zero-width and other format characters removed,
// Unicode tag characters decoded to the ASCII they hide, and runs of
// white space collapsed to one space, or one newline when the run holds
// a line break. pos maps every byte of text back to the offset in the
// original of the rune it came from.
type normalized struct {
	text []byte
	pos  []int32
	end  int // length of the original
	// hidden are zero-width characters found inside words, tags are
	// Unicode tag characters, bidi are bidirectional-text controls: each
	// as spans of the original, adjacent ones merged.
	hidden, tags, bidi []Span
}

func isZeroWidth(r rune) bool {
	switch r {
	case 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x180E, 0x2061, 0x2062, 0x2063, 0x2064:
		return true
	}
	return false
}

func isBidi(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// addSpan appends [start,end) to spans, merging it with the last span
// when they touch.
func addSpan(spans []Span, start, end int) []Span {
	if n := len(spans); n > 0 && spans[n-1].End == start {
		spans[n-1].End = end
		return spans
	}
	return append(spans, Span{Start: start, End: end})
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func normalize(src []byte, base int) *normalized {
	n := &normalized{
		text: make([]byte, 0, len(src)),
		pos:  make([]int32, 0, len(src)),
		end:  base + len(src),
	}
	var (
		pendingSpace   = -1 // offset of the first white space not yet written
		pendingNewline bool
		prevWord       bool // the last visible rune was a letter or digit
		zwStart        = -1 // first zero-width rune since the last visible one
		zwEnd          int
	)
	emit := func(r rune, at int) {
		if pendingSpace >= 0 {
			if len(n.text) > 0 {
				c := byte(' ')
				if pendingNewline {
					c = '\n'
				}
				n.text = append(n.text, c)
				n.pos = append(n.pos, int32(pendingSpace))
			}
			pendingSpace, pendingNewline = -1, false
		}
		if r < utf8.RuneSelf {
			n.text = append(n.text, byte(r))
			n.pos = append(n.pos, int32(at))
			return
		}
		l := len(n.text)
		n.text = utf8.AppendRune(n.text, r)
		for range len(n.text) - l {
			n.pos = append(n.pos, int32(at))
		}
	}
	// visible handles one folded rune that shows on the page.
	visible := func(r rune, at int) {
		if unicode.IsSpace(r) {
			if pendingSpace < 0 {
				pendingSpace = at
			}
			if r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029 {
				pendingNewline = true
			}
			prevWord = false
			zwStart = -1
			return
		}
		word := isWordRune(r)
		if zwStart >= 0 && prevWord && word {
			n.hidden = addSpan(n.hidden, zwStart, zwEnd)
		}
		zwStart = -1
		prevWord = word
		emit(unicode.ToLower(r), at)
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(src); {
		c := src[i]
		at := base + i
		if c < utf8.RuneSelf {
			i++
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' {
				visible(rune(c), at)
				continue
			}
			if zwStart >= 0 || pendingSpace >= 0 {
				visible(rune(c), at)
				continue
			}
			// The common case: a visible ASCII byte right after another.
			prevWord = ('a' <= c && c <= 'z') || ('0' <= c && c <= '9')
			n.text = append(n.text, c)
			n.pos = append(n.pos, int32(at))
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			visible(r, at)
		case isZeroWidth(r):
			if r == 0xFEFF && at == 0 {
				continue // a byte order mark opening a file
			}
			if zwStart < 0 {
				zwStart = at
			}
			zwEnd = at + size
		case isTag(r):
			n.tags = addSpan(n.tags, at, at+size)
			if r >= 0xE0020 && r <= 0xE007E {
				visible(r-0xE0000, at)
			}
		case isBidi(r):
			n.bidi = addSpan(n.bidi, at, at+size)
		case r == 0x200E || r == 0x200F || unicode.Is(unicode.Cf, r):
			// Other format characters do not show: drop them.
		default:
			m := utf8.EncodeRune(buf[:], r)
			d := norm.NFKC.Properties(buf[:m]).Decomposition()
			if d == nil {
				visible(r, at)
				continue
			}
			for len(d) > 0 {
				dr, ds := utf8.DecodeRune(d)
				d = d[ds:]
				if unicode.Is(unicode.Mn, dr) {
					continue // accents
				}
				visible(dr, at)
			}
		}
	}
	return n
}

// span maps the normalized byte range [i,j) back to the original: from
// the rune byte i came from to the end of the rune byte j-1 came from.
func (n *normalized) span(i, j int) Span {
	last := n.pos[j-1]
	k := j
	for k < len(n.pos) && n.pos[k] == last {
		k++
	}
	s := Span{Start: int(n.pos[i]), End: n.end}
	if k < len(n.pos) {
		s.End = int(n.pos[k])
	}
	return s
}
