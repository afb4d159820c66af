package driver

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one embedded schema migration of a driver.
type Migration struct {
	Version int    // from the file name's numeric prefix, e.g. 3 for 0003_runs.sql
	Name    string // the file name
	SQL     string
}

// LoadMigrations reads dir/*.sql from a driver's embedded files, ordered by
// version. A file whose name does not start with its version is an error.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	files, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, f := range files {
		base := path.Base(f)
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its version: %w", base, err)
		}
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: base, SQL: string(b)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no migrations in %s", dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	// Versions run 1, 2, 3… with no gap and no repeat: the runner skips
	// every version at or below a store's current one, so a migration
	// numbered into a gap later would never run on a store already past it.
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d where %d was due (versions run 1, 2, 3… with no gap or repeat)", m.Name, m.Version, i+1)
		}
	}
	return out, nil
}
