package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain runs main when the test binary is started as benchcmp by
// TestFlags.
func TestMain(m *testing.M) {
	if os.Getenv("BENCHCMP_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFlags checks that bad flags exit with status 2 and say why, before
// anything is built or created.
func TestFlags(t *testing.T) {
	used := t.TempDir()
	if err := os.WriteFile(filepath.Join(used, "left"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-runs", "0"}, "-runs must be at least 1, got 0"},
		{[]string{"-tools", "0"}, "-tools must be at least 1, got 0"},
		{[]string{"-floor-runs", "-2"}, "-floor-runs must be at least 1, got -2"},
		{[]string{"-dep-js", "-1"}, "0 leaves out the tools with an npm dependency"},
		{[]string{"-dep-js", "0", "-dep-modules", "-5"}, "-dep-modules must be at least 1, got -5"},
		{[]string{"-nosuchflag"}, "flag provided but not defined"},
		{[]string{"extra"}, "benchcmp takes no arguments"},
		{[]string{"-workdir", used}, "is not empty (it holds left)"},
		{[]string{"-workdir", file}, "creating the work directory"},
		{[]string{"-terraform", filepath.Join(t.TempDir(), "missing")}, "terraform binary"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tt.args...)
			cmd.Env = append(os.Environ(), "BENCHCMP_RUN_MAIN=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Fatalf("exit\ngot:  %v\nwant: status 2\nstderr:\n%s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr\ngot:  %s\nwant: a line with %q", stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "go build") {
				t.Errorf("stderr\ngot:  %s\nwant: no build before the refusal", stderr.String())
			}
		})
	}
	if entries, _ := os.ReadDir(used); len(entries) != 1 {
		t.Errorf("the work directory in use\ngot:  %d entries\nwant: 1, untouched", len(entries))
	}
}
