package main

import "testing"

func TestLibpqURL_DropsThePoolParametersOfPgx(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u@h:5432/db?sslmode=disable&pool_max_conns=8", "postgres://u@h:5432/db?sslmode=disable"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"host=h dbname=db pool_max_conns=8 sslmode=disable", "host=h dbname=db sslmode=disable"},
	} {
		if got := (&pgTarget{url: c.in}).libpqURL(); got != c.want {
			t.Errorf("libpqURL(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestStatementKind_NamesTheBackendsStatements(t *testing.T) {
	for sql, want := range map[string]string{
		"BEGIN ISOLATION LEVEL SERIALIZABLE":                    "BEGIN",
		"SELECT v FROM kv WHERE k = $1":                         "get",
		"SELECT k, v FROM kv WHERE k >= $1 ORDER BY k LIMIT $2": "scan",
		"INSERT INTO kv (k, v) SELECT * FROM unnest($1::bytea[], $2::bytea[]) ON CONFLICT (k) DO UPDATE SET v = excluded.v": "write",
		"DELETE FROM kv WHERE k = ANY($1::bytea[])": "write",
		"SELECT nextval('kv_seq_0123')":             "nextval",
		"COMMIT":                                    "COMMIT",
	} {
		if got := statementKind(sql); got != want {
			t.Errorf("statementKind(%q) = %q; want %q", sql, got, want)
		}
	}
}
