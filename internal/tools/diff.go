package tools

import (
	"fmt"
	"strings"
)

// maxDiffCells bounds the work of lineDiff (lines of a × lines of b).
const maxDiffCells = 4 << 20

// lineDiff returns a line diff of a and b in unified style (without hunk
// headers): " " common, "-" only in a, "+" only in b. A missing file
// (aok or bok false) is said, and files too large to compare line by
// line are described by size.
func lineDiff(aname, bname string, a, b []byte, aok, bok bool) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", aname, bname)
	if !aok {
		sb.WriteString("(the call had deleted this file)\n")
	}
	if !bok {
		sb.WriteString("(the file does not exist now)\n")
	}
	al, bl := splitLines(string(a)), splitLines(string(b))
	if len(al)*len(bl) > maxDiffCells {
		fmt.Fprintf(&sb, "(too large to compare line by line: %d bytes against %d bytes)\n", len(a), len(b))
		return sb.String()
	}
	// longest common subsequence table, from the end
	n, m := len(al), len(bl)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && al[i] == bl[j]:
			sb.WriteString(" " + al[i] + "\n")
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			sb.WriteString("+" + bl[j] + "\n")
			j++
		default:
			sb.WriteString("-" + al[i] + "\n")
			i++
		}
	}
	return sb.String()
}

// splitLines splits s into lines without their newlines; "" has none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
