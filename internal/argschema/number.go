package argschema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// decimal is a JSON number literal taken apart, exactly: its value is
// ±0.d₁d₂…dₙ × 10^point, where d₁…dₙ are the significant digits (the
// literal's digits from its first non-zero one to its last non-zero
// one). A zero has no digits.
type decimal struct {
	neg             bool
	whole, fraction string // the digits before and after the literal's '.'
	first, end      int    // the significant digits: index [first, end) of whole+fraction
	point           int64
}

// digit returns digit i of whole+fraction.
func (d *decimal) digit(i int) byte {
	if i < len(d.whole) {
		return d.whole[i]
	}
	return d.fraction[i-len(d.whole)]
}

// sigDigit returns significant digit i, '0' past the last one.
func (d *decimal) sigDigit(i int) byte {
	if j := d.first + i; j < d.end {
		return d.digit(j)
	}
	return '0'
}

func (d *decimal) zero() bool { return d.first == d.end }

// maxExp bounds the exponent kept; past it a number is as good as
// infinitely large or small for an integer bound of at most 2^53.
const maxExp = 1 << 40

// parseDecimal takes apart s, a JSON number literal, without allocating;
// ok is false when s is not one.
func parseDecimal(s string) (d decimal, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	start := i
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return d, false
	}
	d.whole = s[start:i]
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return d, false
		}
		d.fraction = s[start:i]
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		negExp := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			negExp = s[i] == '-'
			i++
		}
		start = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < maxExp {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if i == start {
			return d, false
		}
		if negExp {
			exp = -exp
		}
	}
	if i != len(s) {
		return d, false
	}
	n := len(d.whole) + len(d.fraction)
	for d.first < n && d.digit(d.first) == '0' {
		d.first++
	}
	d.end = n
	for d.end > d.first && d.digit(d.end-1) == '0' {
		d.end--
	}
	d.point = int64(len(d.whole)) + exp - int64(d.first)
	return d, true
}

// isInteger reports whether the value has no fractional part.
func (d *decimal) isInteger() bool {
	return d.zero() || int64(d.end-d.first) <= d.point
}

// cmpInt compares the value with b: -1, 0 or +1.
func (d *decimal) cmpInt(b int64) int {
	switch {
	case d.zero():
		return -sign(b)
	case b == 0 || d.neg != (b < 0):
		if d.neg {
			return -1
		}
		return 1
	}
	c := d.cmpMagnitude(b)
	if d.neg {
		return -c
	}
	return c
}

// cmpMagnitude compares |value| with |b|, both non-zero.
func (d *decimal) cmpMagnitude(b int64) int {
	var buf [24]byte
	bs := strconv.AppendUint(buf[:0], absInt(b), 10)
	switch {
	case d.point > int64(len(bs)):
		return 1
	case d.point < int64(len(bs)):
		return -1
	}
	n := max(d.end-d.first, len(bs))
	for i := range n {
		db := byte('0')
		if i < len(bs) {
			db = bs[i]
		}
		if dv := d.sigDigit(i); dv != db {
			if dv < db {
				return -1
			}
			return 1
		}
	}
	return 0
}

func absInt(b int64) uint64 {
	if b < 0 {
		return uint64(-b)
	}
	return uint64(b)
}

func sign(b int64) int {
	switch {
	case b < 0:
		return -1
	case b > 0:
		return 1
	}
	return 0
}

// isInteger reports whether the number v (kindOf(v) == tNumber) has no
// fractional part.
func isInteger(v any) bool {
	switch v := v.(type) {
	case float64:
		return math.Trunc(v) == v
	case float32:
		return math.Trunc(float64(v)) == float64(v)
	case json.Number:
		d, _ := parseDecimal(string(v))
		return d.isInteger()
	}
	return true // a Go integer
}

// cmpNumber compares the number v (kindOf(v) == tNumber) with b, an
// integer of at most 2^53 in magnitude (so exactly a float64): -1, 0 or +1.
func cmpNumber(v any, b int64) int {
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case float32:
		f = float64(v)
	case json.Number:
		d, _ := parseDecimal(string(v))
		return d.cmpInt(b)
	case int:
		return cmp.Compare(int64(v), b)
	case int8:
		return cmp.Compare(int64(v), b)
	case int16:
		return cmp.Compare(int64(v), b)
	case int32:
		return cmp.Compare(int64(v), b)
	case int64:
		return cmp.Compare(v, b)
	case uint:
		return cmpUint64(uint64(v), b)
	case uint8:
		return cmpUint64(uint64(v), b)
	case uint16:
		return cmpUint64(uint64(v), b)
	case uint32:
		return cmpUint64(uint64(v), b)
	case uint64:
		return cmpUint64(v, b)
	case uintptr:
		return cmpUint64(uint64(v), b)
	}
	fb := float64(b)
	switch {
	case f < fb:
		return -1
	case f > fb:
		return 1
	}
	return 0
}

func cmpUint64(a uint64, b int64) int {
	if b < 0 || a > math.MaxInt64 {
		return 1
	}
	return cmp.Compare(int64(a), b)
}

// formatNumber renders the number v for a message.
func formatNumber(v any) string {
	switch v := v.(type) {
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case json.Number:
		return string(v)
	}
	return fmt.Sprint(v)
}
