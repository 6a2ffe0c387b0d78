package main

import (
	"flag"
	"fmt"
	"io"
)

// subcommandUsage is the usage line and summary of each subcommand, and
// the server's flags it takes: its -h prints these only.
var subcommandUsage = map[string]struct {
	usage string
	flags []string
}{
	"import": {"usage: marketplaced import [-data DIR | -postgres URL] FILE\n\nUpserts the records of a reference document (FILE, or - for standard input)\ninto the data folder or the PostgreSQL database, and exits.",
		[]string{"data", "postgres", "log-level"}},
	"migrate": {"usage: marketplaced migrate [-dry-run] [-data DIR | -postgres URL]\n\nRuns the pending storage migrations and exits; -dry-run prints each pending\nmigration and how many keys it would write and delete, and changes nothing.",
		[]string{"data", "postgres", "log-level"}},
}

// printUsage writes the -h text of cmd ("" for the server) to stderr. A
// subcommand shows only the flags it takes, from the server's flag set fs,
// with their values as the environment and the command line have set them.
func printUsage(stderr io.Writer, cmd string, fs *flag.FlagSet) {
	if u, ok := subcommandUsage[cmd]; ok {
		fmt.Fprintf(stderr, "%s\n\nFlags (each also MARKETPLACE_<NAME>):\n", u.usage)
		sub := flag.NewFlagSet(cmd, flag.ContinueOnError)
		sub.SetOutput(stderr)
		for _, name := range u.flags {
			f := fs.Lookup(name)
			sub.Var(f.Value, f.Name, f.Usage)
		}
		sub.PrintDefaults()
		return
	}
	fmt.Fprintf(stderr, "usage: marketplaced [flags]\n       marketplaced import [-data DIR | -postgres URL] FILE\n       marketplaced migrate [-dry-run] [-data DIR | -postgres URL]\n       marketplaced drift [-json] PATH...\n\nFlags (each also MARKETPLACE_<NAME>):\n")
	fs.PrintDefaults()
}
