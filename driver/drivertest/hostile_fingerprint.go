package drivertest

import (
	"fmt"
	"strings"
)

// fingerprint is every row of every table of the store, in a stable order,
// one line per table: what "a refused input changes nothing" (SPEC §5) is
// checked against. It reads the catalogue rather than a list of tables, so
// a table added by a later migration is covered without touching this.
//
// Postgres renders a row generically (row::text) and hashes each table;
// SQLite has neither, so each column is quote()d (a BLOB as X'…') and the
// rows are concatenated. Both orders are by the rendered row, not by an
// id, so a table without one is as stable.
func (e *env) fingerprint() (string, error) {
	if e.h.Query == nil {
		return "", fmt.Errorf("the harness has no Query")
	}
	switch e.d.Name() {
	case "postgres":
		return e.fingerprintWith(
			`SELECT coalesce(string_agg(tablename, ',' ORDER BY tablename), '') FROM pg_tables WHERE schemaname = current_schema()`,
			func(table string) (string, error) {
				return fmt.Sprintf(`SELECT count(*)::text || ' ' || coalesce(md5(string_agg(t::text, E'\n' ORDER BY t::text)), '') FROM %q t`, table), nil
			})
	case "sqlite":
		return e.fingerprintWith(
			`SELECT coalesce(group_concat(name, ','), '') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)`,
			func(table string) (string, error) {
				var cols string
				q := fmt.Sprintf(`SELECT coalesce(group_concat('quote("' || name || '")', ' || '','' || '), '') FROM pragma_table_info('%s')`, table)
				if err := e.h.Query(e.ctx, q, &cols); err != nil {
					return "", err
				}
				return fmt.Sprintf(`SELECT count(*) || ' ' || coalesce(group_concat(r, char(10)), '') FROM (SELECT %s AS r FROM %q ORDER BY 1)`, cols, table), nil
			})
	}
	return "", fmt.Errorf("no fingerprint for driver %s", e.d.Name())
}

func (e *env) fingerprintWith(tablesSQL string, rowsSQL func(table string) (string, error)) (string, error) {
	var tables string
	if err := e.h.Query(e.ctx, tablesSQL, &tables); err != nil {
		return "", fmt.Errorf("listing tables: %w", err)
	}
	var b strings.Builder
	for _, table := range strings.Split(tables, ",") {
		q, err := rowsSQL(table)
		if err != nil {
			return "", fmt.Errorf("columns of %s: %w", table, err)
		}
		var rows string
		if err := e.h.Query(e.ctx, q, &rows); err != nil {
			return "", fmt.Errorf("rows of %s: %w", table, err)
		}
		fmt.Fprintf(&b, "%s: %s\n", table, rows)
	}
	return b.String(), nil
}

// changedTables names the tables whose line differs between two
// fingerprints.
func changedTables(before, after string) []string {
	b, a := strings.Split(before, "\n"), strings.Split(after, "\n")
	var out []string
	for i := range max(len(a), len(b)) {
		var x, y string
		if i < len(b) {
			x = b[i]
		}
		if i < len(a) {
			y = a[i]
		}
		if x != y {
			name, _, _ := strings.Cut(x+y, ":")
			out = append(out, name)
		}
	}
	return out
}
