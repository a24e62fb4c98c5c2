// Package secrets finds secrets — API keys, tokens, passwords, private
// keys — in text.
//
// toolgate uses it on what a tool call sends out (request bodies, URLs,
// the arguments of a command such as curl -d 'token=…' https://x) and to
// redact the previews it stores in events.
//
// # Scanning
//
// [Scan] returns every secret in a text with its byte offsets and the rule
// that found it; [Contains] only answers whether there is one; [Redact]
// replaces each secret with "[REDACTED:<rule id>]":
//
//	for _, f := range secrets.Scan(body) {
//		fmt.Printf("%s at %d-%d: %s\n", f.Rule, f.Start, f.End, f.Description)
//	}
//	preview := secrets.Redact(output)
//
// Findings never overlap. When two rules find overlapping text the longer
// finding wins, and between equally long ones the rule listed first in the
// data file, so that "password=sk_live_…" is reported as a Stripe key
// rather than as a generic password.
//
// # Rules
//
// The rules live in one data file, patterns.toml, embedded in the package
// and loaded on first use; [Rules] lists their ids. A rule has a Go regular
// expression, optionally the capture group that holds the secret, a minimum
// Shannon entropy for the secret (bits per byte), stopwords that mark a
// placeholder such as "your_api_key_here", and keywords. The head of the
// file documents every field.
//
// Keywords make scanning fast. Every keyword of every rule is found in one
// pass over the text, ignoring case, with an Aho-Corasick automaton; a
// rule's regex runs only on the lines that hold one of its keywords (or,
// for a multiline rule such as private-key, on the whole text), and text
// with no keyword at all costs that one pass. A keyword must therefore
// occur in everything the rule can match.
//
// The generic-secret rule finds a value of 16 or more characters, with
// letters and digits and an entropy of at least 3.5 bits per character,
// assigned to a name like password, secret, token, api_key or access_key.
// Values taken from elsewhere (${VAR}, os.Getenv("PW"), <token>) and
// placeholders (changeme, xxxx…, your_api_key_here) are not reported.
//
// The tests check that the data file loads (a broken file fails with its
// file and line), that every rule has a positive and a negative example, and
// that the keyword prefilter never hides a finding.
package secrets
