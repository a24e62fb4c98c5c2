package storekit

import (
	"testing"
	"testing/fstest"
)

func TestLoadMigrations(t *testing.T) {
	for name, files := range map[string]fstest.MapFS{
		"gap":        {"migrations/0001_a.sql": {}, "migrations/0003_c.sql": {}},
		"duplicate":  {"migrations/0001_a.sql": {}, "migrations/0001_b.sql": {}},
		"unnumbered": {"migrations/init.sql": {}},
		"zero":       {"migrations/0000_a.sql": {}},
	} {
		if _, err := LoadMigrations(files); err == nil {
			t.Errorf("%s: LoadMigrations accepted %v", name, files)
		}
	}
	ms, err := LoadMigrations(fstest.MapFS{"migrations/0002_b.sql": {Data: []byte("B")}, "migrations/0001_a.sql": {Data: []byte("A")}})
	if err != nil || len(ms) != 2 || ms[0].SQL != "A" || ms[1].SQL != "B" || ms[1].Name != "0002_b.sql" {
		t.Errorf("LoadMigrations = %v, %v; want A then B", ms, err)
	}
}
