// Command nullserver answers POST /v1/check with a fixed allow and does
// nothing else: no engine, no event log. Measured with checkload on the
// same machine, it gives the ceiling that Go's HTTP server and the load
// generator leave for a decision, before toolgate does any work.
//
//	nullserver -addr 127.0.0.1:8766 &
//	checkload -server http://127.0.0.1:8766 -token-file any-file -conns 64
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
)

// answer has the size and shape of toolgate's answer to an allowed call.
const answer = `{"decision":"allow","reason":"rule_allow","message":"allowed by rule Bash(git status) (cli)","risk":"read","source":"rule","rule":"Bash(git status)","rule_origin":"cli","tool_call_id":"tc_c4e06d33bb7658b1"}`

func main() {
	addr := flag.String("addr", "127.0.0.1:8766", "address to listen on")
	flag.Parse()
	http.HandleFunc("POST /v1/check", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	})
	if err := http.ListenAndServe(*addr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "nullserver:", err)
		os.Exit(1)
	}
}
