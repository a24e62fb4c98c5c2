package storekit

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// A Migration is one step of a store's schema: migrations/NNNN_name.sql.
type Migration struct {
	Version int
	Name    string // the file's base name
	SQL     string
}

// LoadMigrations reads fsys's migrations/*.sql in version order and checks
// that they are named NNNN_description.sql and numbered 1, 2, 3, …
// without gaps or duplicates.
func LoadMigrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: the name must be NNNN_description.sql with NNNN > 0", name)
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(src)})
	}
	// fs.Glob returns names sorted; with zero-padded numbers that is version order.
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s has version %d, want %d: versions must run 1, 2, 3, … without gaps or duplicates", m.Name, m.Version, i+1)
		}
	}
	return ms, nil
}
