package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeMarker precedes a README shell block this test runs:
// <!-- readme-test --> or <!-- readme-test: expect TEXT -->.
var readmeMarker = regexp.MustCompile(`^\s*<!-- readme-test(?:: expect (.+?))? -->\s*$`)

// readmeBlock is a marked shell block of the README.
type readmeBlock struct {
	line   int    // of the marker, 1-based
	script string // the block's lines, unindented
	expect string // a substring of its stdout ("" for none)
}

// readmeBlocks extracts the marked shell blocks of a README.
func readmeBlocks(t *testing.T, text string) []readmeBlock {
	t.Helper()
	lines := strings.Split(text, "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		m := readmeMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		b := readmeBlock{line: i + 1, expect: m[1]}
		j := i + 1
		fence := strings.TrimSpace(lines[min(j, len(lines)-1)])
		if fence != "```sh" {
			t.Fatalf("README.md:%d: a readme-test marker must be followed by a ```sh block", b.line)
		}
		indent := lines[j][:strings.Index(lines[j], "```")]
		var body []string
		for j++; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, strings.TrimPrefix(lines[j], indent))
		}
		if j == len(lines) {
			t.Fatalf("README.md:%d: unclosed block", b.line)
		}
		b.script = strings.Join(body, "\n") + "\n"
		out = append(out, b)
		i = j
	}
	return out
}

// TestReadmeWalkthrough runs the README's marked shell blocks as a
// newcomer would in a fresh clone (the demo pipe, the client call, tools
// and validate on the Petstore), from the repository root, with
// "go run ./cmd/mcpbridge" standing for this binary, and checks each
// succeeds and prints what it promises.
func TestReadmeWalkthrough(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t, string(readme))
	if len(blocks) < 3 {
		t.Fatalf("%d marked blocks in README.md, want the demo pipe, the client call and tools at least", len(blocks))
	}
	for _, need := range []string{"| go run ./cmd/mcpbridge demo", "mcpbridge tools --spec"} {
		found := false
		for _, b := range blocks {
			found = found || strings.Contains(b.script, need)
		}
		if !found {
			t.Errorf("no marked README block runs %q", need)
		}
	}
	// "mcpbridge" on PATH is this test binary acting as the program.
	bin := t.TempDir()
	wrapper := "#!/bin/sh\n" + runMainEnv + "=1 exec '" + os.Args[0] + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "mcpbridge"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		script := strings.ReplaceAll(b.script, "go run ./cmd/mcpbridge", "mcpbridge")
		if strings.Contains(script, "go test") {
			t.Fatalf("README.md:%d: a marked block must not run the tests", b.line)
		}
		t.Run(strings.TrimSpace(strings.SplitN(script, "\n", 2)[0]), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bash, "-e", "-o", "pipefail", "-c", script)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("README.md:%d: %v\nstdout:\n%s\nstderr:\n%s", b.line, err, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), b.expect) {
				t.Errorf("README.md:%d: stdout lacks %q:\n%s", b.line, b.expect, out.String())
			}
		})
	}
}
