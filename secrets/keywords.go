package secrets

// keyword is one keyword of one rule.
type keyword struct {
	text string
	rule int
}

// matcher finds keywords in a text in one pass, ignoring ASCII case. It is
// an Aho-Corasick automaton compiled to a table-driven DFA over byte
// classes: every byte that occurs in no keyword is class 0.
type matcher struct {
	class  [256]uint8
	nclass int
	// States are numbered state*nclass, so that next[state+class] is the
	// next state without a multiplication.
	next []uint32
	// rules[state/nclass] lists the rules of the keywords that end at
	// state, including those found through the failure links.
	rules [][]int
	// hit[state] is set when rules[state/nclass] is not empty.
	hit []bool
	// maxLen is the length of the longest keyword.
	maxLen int
}

// newMatcher builds the automaton. Keywords are lower-case.
func newMatcher(kws []keyword) *matcher {
	m := &matcher{}
	n := 0
	for _, kw := range kws {
		m.maxLen = max(m.maxLen, len(kw.text))
		for i := 0; i < len(kw.text); i++ {
			c := kw.text[i]
			if m.class[c] != 0 {
				continue
			}
			n++
			m.class[c] = uint8(n)
			if 'a' <= c && c <= 'z' {
				m.class[c-'a'+'A'] = uint8(n)
			}
		}
	}
	m.nclass = n + 1
	// The trie: child[state*nclass+class], -1 when absent. It has at most
	// one state per keyword byte, and the root.
	states := 1
	for _, kw := range kws {
		states += len(kw.text)
	}
	child := make([]int, 0, states*m.nclass)
	m.rules = make([][]int, 0, states)
	addState := func() int {
		at := len(child)
		child = child[:at+m.nclass]
		for i := at; i < len(child); i++ {
			child[i] = -1
		}
		m.rules = append(m.rules, nil)
		return len(m.rules) - 1
	}
	addState()
	for _, kw := range kws {
		st := 0
		for i := 0; i < len(kw.text); i++ {
			c := int(m.class[kw.text[i]])
			if child[st*m.nclass+c] < 0 {
				next := addState()
				child[st*m.nclass+c] = next
			}
			st = child[st*m.nclass+c]
		}
		m.rules[st] = appendRule(m.rules[st], kw.rule)
	}
	// Breadth-first: failure links, the full transition table and the
	// inherited outputs.
	ns := len(m.rules)
	delta := make([]int, ns*m.nclass)
	fail := make([]int, ns)
	queue := []int{}
	for c := range m.nclass {
		if v := child[c]; v >= 0 {
			delta[c] = v
			queue = append(queue, v)
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, r := range m.rules[fail[u]] {
			m.rules[u] = appendRule(m.rules[u], r)
		}
		for c := range m.nclass {
			f := int(delta[fail[u]*m.nclass+c])
			if v := child[u*m.nclass+c]; v >= 0 {
				fail[v] = f
				delta[u*m.nclass+c] = v
				queue = append(queue, v)
			} else {
				delta[u*m.nclass+c] = f
			}
		}
	}
	m.next = make([]uint32, len(delta))
	for i, st := range delta {
		m.next[i] = uint32(st * m.nclass)
	}
	m.hit = make([]bool, len(delta))
	for st, rs := range m.rules {
		m.hit[st*m.nclass] = len(rs) > 0
	}
	return m
}

func appendRule(rules []int, r int) []int {
	for _, x := range rules {
		if x == r {
			return rules
		}
	}
	return append(rules, r)
}

// eachKeyword calls f, in order, for every position i in s where a keyword
// ends, with the rules of the keywords that end there.
//
// Long texts are read as two halves at once, which keeps two independent
// table look-ups in flight: the second half starts maxLen-1 bytes early so
// that it sees every keyword that ends in it, and its hits, which are rare,
// wait in a buffer until the first half is done.
func eachKeyword[T string | []byte](m *matcher, s T, f func(i int, rules []int)) {
	next, hit, class := m.next, m.hit, &m.class
	n := len(s)
	if n < 1024 || m.maxLen > 256 {
		var st uint32
		for i := 0; i < n; i++ {
			st = next[st+uint32(class[s[i]])]
			if hit[st] {
				f(i, m.rules[int(st)/m.nclass])
			}
		}
		return
	}
	mid := n / 2
	j := mid - (m.maxLen - 1)
	var later []int
	var a, b uint32
	for i := 0; i < mid; i, j = i+1, j+1 {
		a = next[a+uint32(class[s[i]])]
		b = next[b+uint32(class[s[j]])]
		if hit[a] {
			f(i, m.rules[int(a)/m.nclass])
		}
		if hit[b] && j >= mid {
			later = append(later, j, int(b))
		}
	}
	for ; j < n; j++ {
		b = next[b+uint32(class[s[j]])]
		if hit[b] && j >= mid {
			later = append(later, j, int(b))
		}
	}
	for k := 0; k < len(later); k += 2 {
		f(later[k], m.rules[later[k+1]/m.nclass])
	}
}
