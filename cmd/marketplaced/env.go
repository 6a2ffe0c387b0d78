package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// applyEnv sets each flag from MARKETPLACE_<NAME> before the command line is
// parsed, so that the command line wins. A value that is refused names the
// values accepted.
func applyEnv(fs flags) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "version" {
			return // a request to print and exit, not a setting
		}
		name := "MARKETPLACE_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		v, ok := os.LookupEnv(name)
		if !ok || err != nil {
			return
		}
		if values, ok := fs.words[f.Name]; ok && !slices.Contains(values, v) {
			err = fmt.Errorf("%s=%q: accepted values are %s", name, v, strings.Join(values, ", "))
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = fmt.Errorf("%s=%q: %w; accepted values are %s", name, v, e, fs.accepts[f.Name])
		}
	})
	return err
}
