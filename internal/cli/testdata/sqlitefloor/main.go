// Command sqlitefloor is the floor of a process that records one event in
// the embedded log: it opens an SQLite file in WAL mode with the event
// log's pragmas, appends one row in a synced transaction and exits without
// closing, as a hook does. TestHookLatency times it beside the hook.
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sqlitefloor FILE")
		os.Exit(2)
	}
	db, err := sql.Open("sqlite", "file:"+os.Args[1]+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, session TEXT NOT NULL, payload TEXT NOT NULL) STRICT",
		"INSERT INTO events (session, payload) VALUES ('s1', '{\"type\":\"permission.resolved\"}')",
	} {
		if _, err := db.Exec(q); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
