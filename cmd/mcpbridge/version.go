package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// buildVersion is what "mcpbridge version" reports, from the link-time
// version and the build information the Go toolchain records.
type buildVersion struct {
	Version  string // -ldflags "-X main.version=…", else the module version, else "devel"
	Module   string // the main module path
	Revision string // the VCS revision ("" when not built from a checkout)
	Time     string // the revision's commit time, RFC 3339
	Modified bool   // the checkout had uncommitted changes
	Go       string // the Go version and platform
}

// readBuildVersion reads the build information of the running binary.
func readBuildVersion() buildVersion {
	bv := buildVersion{Version: version, Module: "github.com/mcpbridge/mcpbridge", Go: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if ok {
		if info.Main.Path != "" {
			bv.Module = info.Main.Path
		}
		if bv.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			bv.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				bv.Revision = s.Value
			case "vcs.time":
				bv.Time = s.Value
			case "vcs.modified":
				bv.Modified = s.Value == "true"
			}
		}
	}
	if bv.Version == "dev" || bv.Version == "" {
		bv.Version = "devel"
	}
	return bv
}

// printVersion is "mcpbridge version".
func printVersion(w io.Writer) error {
	bv := readBuildVersion()
	fmt.Fprintf(w, "mcpbridge %s\nmodule:    %s\n", bv.Version, bv.Module)
	if bv.Revision != "" {
		rev := bv.Revision
		if bv.Modified {
			rev += " (modified)"
		}
		fmt.Fprintf(w, "revision:  %s\n", rev)
		if bv.Time != "" {
			fmt.Fprintf(w, "committed: %s\n", bv.Time)
		}
	} else {
		fmt.Fprintf(w, "revision:  unknown (not built from a git checkout)\n")
	}
	_, err := fmt.Fprintf(w, "go:        %s\n", bv.Go)
	return err
}
