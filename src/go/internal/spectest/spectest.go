// Package spectest reads the contract files in spec/ for the Go tests, so that
// every test package checks the code against the same, single reading of them.
package spectest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

// UsageCase is a command line the program must refuse: exit code usage,
// nothing on stdout, one stderr line "error: ..." containing every mention.
type UsageCase struct {
	Args     []string `json:"args"`
	Mentions []string `json:"mentions"`
}

// ValidCase is a command line the program must accept; under Variant nil or
// "fair", Params is what the record's params must be.
type ValidCase struct {
	Args      []string       `json:"args"`
	Benchmark string         `json:"benchmark"`
	Variant   *string        `json:"variant"`
	Params    map[string]any `json:"params"` // json.Number or string
}

// ParserCases is tests/conformance/parser-cases.json, generated from
// spec/cli.json by tests/python/conformance/cases.py.
type ParserCases struct {
	CLIJSONSHA256 string         `json:"cli_json_sha256"`
	ExitCodes     map[string]int `json:"exit_codes"`
	Languages     map[string]struct {
		Usage []UsageCase `json:"usage"`
		Valid []ValidCase `json:"valid"`
	} `json:"languages"`
}

// LoadParserCases reads tests/conformance/parser-cases.json (numbers kept
// exact) and fails the test when it was not generated from spec/cli.json as
// it is now.
func LoadParserCases(t testing.TB) ParserCases {
	t.Helper()
	spec := Dir(t)
	cliJSON, err := os.ReadFile(filepath.Join(spec, "cli.json"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(spec), "tests", "conformance", "parser-cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c ParserCases
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("tests/conformance/parser-cases.json: %v", err)
	}
	sum := sha256.Sum256(cliJSON)
	if c.CLIJSONSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatal("tests/conformance/parser-cases.json was generated from another spec/cli.json: run python3 tests/python/conformance/cases.py")
	}
	return c
}
