package jsonschema

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func loadRecordSchema(t *testing.T) *Schema {
	t.Helper()
	dir, err := SpecDir()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(filepath.Join(dir, "native-record.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const goodPingping = `{"benchmark":"pingping","language":"go","variant":"fair",
 "params":{"message_bytes":5000,"repetitions":100000,"payload":"copy"},
 "metrics":{"elapsed_s":0.081,"messages":200000,"ns_per_message":405.0},
 "validation":{"ok":true,"received_a":100000,"received_b":100000,"payload_errors":0},
 "runtime":{"name":"go","version":"go1.26.8","schedulers":2}}`

const goodThroughput = `{"benchmark":"throughput","language":"go","variant":"fair",
 "params":{"pairs":1,"message_bytes":500,"duration_s":0.5,"report_every":10000,"payload":"copy"},
 "metrics":{"exchanges":10,"elapsed_s":0.5,"exchanges_per_s":20,"paper_msgs_per_min":1200,"samples":[[0.1,5],[0.5,10]]},
 "validation":{"ok":true,"reported_exchanges":10,"counted_exchanges":10,"payload_errors":0,"min_pair_exchanges":10},
 "runtime":{"name":"go","version":"go1.26.8","schedulers":1}}`

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	v, err := Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func TestGoodRecordsPass(t *testing.T) {
	s := loadRecordSchema(t)
	for _, rec := range []string{goodPingping, goodThroughput} {
		if err := s.Validate(decode(t, rec)); err != nil {
			t.Errorf("valid record rejected: %v", err)
		}
	}
}

// Each mutation breaks a valid record; the validator must reject every one,
// so that a test passing on real output means something.
func TestBrokenRecordsFail(t *testing.T) {
	s := loadRecordSchema(t)
	cases := []struct {
		name   string
		base   string
		mutate func(m map[string]any)
	}{
		{"missing top-level field", goodPingping, func(m map[string]any) { delete(m, "runtime") }},
		{"missing nested field", goodPingping, func(m map[string]any) { delete(m["validation"].(map[string]any), "payload_errors") }},
		{"extra top-level field", goodPingping, func(m map[string]any) { m["extra"] = true }},
		{"extra nested field", goodPingping, func(m map[string]any) { m["metrics"].(map[string]any)["bogus"] = json.Number("1") }},
		{"wrong type string for integer", goodPingping, func(m map[string]any) { m["metrics"].(map[string]any)["messages"] = "200000" }},
		{"non-integer for integer", goodPingping, func(m map[string]any) { m["metrics"].(map[string]any)["messages"] = json.Number("2.5") }},
		{"wrong type bool", goodPingping, func(m map[string]any) { m["validation"].(map[string]any)["ok"] = "true" }},
		{"bad const", goodPingping, func(m map[string]any) { m["benchmark"] = "pingpong" }},
		{"bad enum", goodPingping, func(m map[string]any) { m["language"] = "rust" }},
		{"below minimum", goodPingping, func(m map[string]any) { m["params"].(map[string]any)["repetitions"] = json.Number("0") }},
		{"negative seconds", goodPingping, func(m map[string]any) { m["metrics"].(map[string]any)["elapsed_s"] = json.Number("-1") }},
		{"empty string", goodPingping, func(m map[string]any) { m["runtime"].(map[string]any)["version"] = "" }},
		{"null not allowed", goodPingping, func(m map[string]any) { m["metrics"].(map[string]any)["ns_per_message"] = nil }},
		{"exclusiveMinimum", goodThroughput, func(m map[string]any) { m["params"].(map[string]any)["duration_s"] = json.Number("0") }},
		{"sample too short", goodThroughput, func(m map[string]any) {
			m["metrics"].(map[string]any)["samples"] = []any{[]any{json.Number("0.1")}}
		}},
		{"sample too long", goodThroughput, func(m map[string]any) {
			m["metrics"].(map[string]any)["samples"] = []any{[]any{json.Number("0.1"), json.Number("1"), json.Number("2")}}
		}},
		{"sample negative", goodThroughput, func(m map[string]any) {
			m["metrics"].(map[string]any)["samples"] = []any{[]any{json.Number("0.1"), json.Number("-1")}}
		}},
		{"samples not array", goodThroughput, func(m map[string]any) { m["metrics"].(map[string]any)["samples"] = nil }},
		{"metrics of another benchmark", goodThroughput, func(m map[string]any) {
			m["metrics"] = decode(t, goodPingping)["metrics"]
		}},
	}
	for _, c := range cases {
		m := decode(t, c.base)
		c.mutate(m)
		if err := s.Validate(m); err == nil {
			t.Errorf("%s: broken record accepted", c.name)
		}
	}
}

func TestVersionInfoDef(t *testing.T) {
	s := loadRecordSchema(t)
	good := `{"program":"serverbench","program_version":"0.1.0","language":"go","runtime":{"name":"go","version":"go1","schedulers":1}}`
	if err := s.ValidateDef("version_info", decode(t, good)); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(good, `"serverbench"`, `"other"`, 1)
	if err := s.ValidateDef("version_info", decode(t, bad)); err == nil {
		t.Fatal("wrong program accepted")
	}
	if err := s.ValidateDef("no_such_def", decode(t, good)); err == nil {
		t.Fatal("unknown $defs entry accepted")
	}
}

func TestUnsupportedKeywordFails(t *testing.T) {
	s, err := Parse([]byte(`{"type":"string","pattern":"^a"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate("abc"); err == nil {
		t.Fatal("a schema keyword the validator does not implement must fail, not pass")
	}
}

func TestTypeList(t *testing.T) {
	s, err := Parse([]byte(`{"type":["integer","null"],"minimum":0}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{"0", "5", "null", "3.0"} {
		v, _ := Decode([]byte(ok))
		if err := s.Validate(v); err != nil {
			t.Errorf("%s rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"-1", "1.5", `"1"`, "true", "[]"} {
		v, _ := Decode([]byte(bad))
		if err := s.Validate(v); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestDecodeRefusesTrailingData(t *testing.T) {
	if _, err := Decode([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Fatal("two JSON values accepted as one")
	}
}
