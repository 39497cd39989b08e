// Package spectest reads the contract files in spec/ for the Go tests, so that
// every test package checks the code against the same, single reading of them.
package spectest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Flag is one flag of spec/cli.json.
type Flag struct {
	Param        *string         `json:"param"`
	Type         string          `json:"type"`
	Min          *json.Number    `json:"min"`
	Max          *json.Number    `json:"max"`
	MinExclusive *json.Number    `json:"min_exclusive"`
	Values       []string        `json:"values"`
	Required     bool            `json:"required"`
	Default      json.RawMessage `json:"default"`
}

// CLI is spec/cli.json.
type CLI struct {
	Benchmarks map[string]struct {
		Flags map[string]Flag `json:"flags"`
	} `json:"benchmarks"`
	ImplementedVariants []string       `json:"implemented_variants"`
	Markers             map[string]any `json:"markers"`
	SampleInterval      float64        `json:"throughput_sample_min_interval_s"`
	ExitCodes           map[string]int `json:"exit_codes"`
	Languages           map[string]any `json:"languages"`
}

// Dir is the repository's spec/ folder.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	// go test runs in the package's folder: walk up to the repository's spec/.
	for {
		cand := filepath.Join(dir, "spec")
		if _, err := os.Stat(filepath.Join(cand, "cli.json")); err == nil {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("spec/cli.json not found above the working directory")
		}
		dir = parent
	}
}

// LoadCLI reads spec/cli.json, keeping numbers exact (json.Number).
func LoadCLI(t testing.TB) CLI {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(t), "cli.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c CLI
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c
}
