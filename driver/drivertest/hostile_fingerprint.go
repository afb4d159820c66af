package drivertest

import (
	"fmt"
	"sort"
	"strings"
)

// fingerprint is every row of every table of the store, in a stable order: what "a refused input changes nothing" (SPEC §5) is
// checked against. It reads the catalogue rather than a list of tables, so
// a table added by a later migration is covered without touching this.
//
// Postgres renders a row generically (row::text) and hashes each table;
// SQLite has neither, so each column is quote()d (a BLOB as X'…') and the
// rows are concatenated. Both orders are by the rendered row, not by an
// id, so a table without one is as stable.
func (e *env) fingerprint() (fingerprint, error) {
	if e.h.Query == nil {
		return nil, fmt.Errorf("the harness has no Query")
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
	return nil, fmt.Errorf("no fingerprint for driver %s", e.d.Name())
}

func (e *env) fingerprintWith(tablesSQL string, rowsSQL func(table string) (string, error)) (fingerprint, error) {
	var tables string
	if err := e.h.Query(e.ctx, tablesSQL, &tables); err != nil {
		return nil, fmt.Errorf("listing tables: %w", err)
	}
	fp := fingerprint{}
	for _, table := range strings.Split(tables, ",") {
		q, err := rowsSQL(table)
		if err != nil {
			return nil, fmt.Errorf("columns of %s: %w", table, err)
		}
		var rows string
		if err := e.h.Query(e.ctx, q, &rows); err != nil {
			return nil, fmt.Errorf("rows of %s: %w", table, err)
		}
		fp[table] = rows
	}
	return fp, nil
}

// fingerprint maps each table of a store to its rows, rendered.
type fingerprint map[string]string

// changedTables names, sorted, the tables whose rows differ between two
// fingerprints (or that only one has).
func changedTables(before, after fingerprint) []string {
	var out []string
	for t, rows := range before {
		if a, ok := after[t]; !ok || a != rows {
			out = append(out, t)
		}
	}
	for t := range after {
		if _, ok := before[t]; !ok {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}
