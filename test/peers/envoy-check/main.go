// envoy-check: Envoy's own validation rules, applied to oooi's rendered envoy.json and bootstrap files.
//
// Each file holds {listeners, clusters, endpoints, routes} in proto3 JSON (the `oooi render`
// contract). Every resource is parsed strictly with protojson into go-control-plane's generated
// Envoy v3 types, every google.protobuf.Any inside it is unpacked and checked too (protoc-gen-validate
// rules do not look inside an Any), ValidateAll() reports every protoc-gen-validate violation, and
// go-control-plane's Snapshot.Consistent() checks that EDS and RDS references match exactly.
// The listener-manager rules (rules.go) apply to the set as a whole: unique names, every
// referenced cluster present, filter types in their place, no two chains matching alike.
//
// A file named bootstrap*.yaml|.yml|.json is an envoy.config.bootstrap.v3.Bootstrap instead
// (bootstrap.go): parsed as strictly, every Any resolved and validated, the same rules on its
// static resources.
//
//	envoy-check FILE|DIR...   (a directory is searched for envoy.json, bootstrap.yaml and bootstrap.json)
//
// Prints one line per violation naming the file, the resource and the field; exit status 1 when
// anything is rejected, 2 when an argument cannot be read.
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: envoy-check FILE|DIR...")
		os.Exit(2)
	}
	files, err := expand(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "envoy-check:", err)
		os.Exit(2)
	}
	rejected := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "envoy-check:", err)
			os.Exit(2)
		}
		var violations []string
		var summary string
		if isBootstrap(file) {
			violations, summary = checkBootstrap(data)
		} else {
			report := checkFile(data)
			violations, summary = report.violations, report.summary()
		}
		for _, v := range violations {
			fmt.Printf("%s: %s\n", file, v)
		}
		if len(violations) > 0 {
			rejected++
			continue
		}
		fmt.Printf("%s: ok (%s)\n", file, summary)
	}
	if rejected > 0 {
		fmt.Printf("envoy-check: %d of %d files rejected\n", rejected, len(files))
		os.Exit(1)
	}
}

// expand turns the arguments into a sorted list of files: a directory contributes every
// envoy.json and bootstrap below it, and must hold at least one.
func expand(args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, arg)
			continue
		}
		var found []string
		err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (d.Name() == "envoy.json" || d.Name() == "bootstrap.yaml" || d.Name() == "bootstrap.json") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no envoy.json or bootstrap below this directory", arg)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	return files, nil
}
