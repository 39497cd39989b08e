// Package jsonschema is a small JSON Schema (2020-12) validator for the subset
// spec/native-record.schema.json uses: type (also a list, and "integer"),
// properties, required, additionalProperties (boolean), enum, const, minimum,
// exclusiveMinimum, minLength, items, minItems, maxItems, oneOf and local
// $ref "#/$defs/...". It exists for the tests (stdlib only, no dependencies)
// and refuses any other keyword, so a schema change it does not understand
// fails loudly instead of passing silently.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Schema is a parsed schema document.
type Schema struct {
	root map[string]any
}

// annotations are keywords that do not constrain anything.
var annotations = map[string]bool{"$schema": true, "$id": true, "$comment": true, "title": true, "description": true, "$defs": true}

var supported = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"enum": true, "const": true, "minimum": true, "exclusiveMinimum": true, "minLength": true,
	"items": true, "minItems": true, "maxItems": true, "oneOf": true, "$ref": true,
}

// Load reads a schema file.
func Load(path string) (*Schema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse parses a schema document.
func Parse(data []byte) (*Schema, error) {
	v, err := Decode(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	return &Schema{root: m}, nil
}

// Decode parses one JSON document keeping numbers as json.Number, so that
// integers and non-integers can be told apart, and refuses trailing data.
func Decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

// Validate checks an instance (from Decode) against the whole schema.
func (s *Schema) Validate(instance any) error {
	return s.report(s.check(s.root, instance, "$"))
}

// ValidateDef checks an instance against #/$defs/<name>.
func (s *Schema) ValidateDef(name string, instance any) error {
	def, err := s.resolve("#/$defs/" + name)
	if err != nil {
		return err
	}
	return s.report(s.check(def, instance, "$"))
}

func (s *Schema) report(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(errs, "; "))
}

func (s *Schema) resolve(ref string) (map[string]any, error) {
	const prefix = "#/$defs/"
	if !strings.HasPrefix(ref, prefix) {
		return nil, fmt.Errorf("unsupported $ref %q (only %s...)", ref, prefix)
	}
	defs, _ := s.root["$defs"].(map[string]any)
	def, ok := defs[strings.TrimPrefix(ref, prefix)].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("$ref %q not found", ref)
	}
	return def, nil
}

func (s *Schema) check(sch map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, a...)) }
	keys := make([]string, 0, len(sch))
	for k := range sch {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic messages
	for _, k := range keys {
		if annotations[k] {
			continue
		}
		if !supported[k] {
			fail("schema keyword %q is not supported by this validator", k)
			continue
		}
		kv := sch[k]
		switch k {
		case "$ref":
			ref, _ := kv.(string)
			def, err := s.resolve(ref)
			if err != nil {
				fail("%v", err)
				continue
			}
			errs = append(errs, s.check(def, v, path)...)
		case "type":
			var types []string
			switch t := kv.(type) {
			case string:
				types = []string{t}
			case []any:
				for _, x := range t {
					if str, ok := x.(string); ok {
						types = append(types, str)
					}
				}
			}
			matched := false
			for _, t := range types {
				if hasType(v, t) {
					matched = true
				}
			}
			if !matched {
				fail("type is %s, want %s", typeName(v), strings.Join(types, " or "))
			}
		case "properties":
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			props, _ := kv.(map[string]any)
			for name, sub := range props {
				if val, present := obj[name]; present {
					subm, _ := sub.(map[string]any)
					errs = append(errs, s.check(subm, val, path+"."+name)...)
				}
			}
		case "required":
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			list, _ := kv.([]any)
			for _, x := range list {
				name, _ := x.(string)
				if _, present := obj[name]; !present {
					fail("missing required property %q", name)
				}
			}
		case "additionalProperties":
			allowed, isBool := kv.(bool)
			if !isBool {
				fail("additionalProperties must be a boolean for this validator")
				continue
			}
			obj, ok := v.(map[string]any)
			if !ok || allowed {
				continue
			}
			props, _ := sch["properties"].(map[string]any)
			var extra []string
			for name := range obj {
				if _, known := props[name]; !known {
					extra = append(extra, name)
				}
			}
			sort.Strings(extra)
			for _, name := range extra {
				fail("additional property %q is not allowed", name)
			}
		case "enum":
			list, _ := kv.([]any)
			found := false
			for _, x := range list {
				if equal(x, v) {
					found = true
				}
			}
			if !found {
				fail("value %v is not in enum %v", v, list)
			}
		case "const":
			if !equal(kv, v) {
				fail("value %v is not the const %v", v, kv)
			}
		case "minimum", "exclusiveMinimum":
			x, ok := num(v)
			if !ok {
				continue
			}
			lim, _ := num(kv)
			if k == "minimum" && x < lim {
				fail("%v is below the minimum %v", v, kv)
			}
			if k == "exclusiveMinimum" && x <= lim {
				fail("%v is not above the exclusive minimum %v", v, kv)
			}
		case "minLength":
			str, ok := v.(string)
			lim, _ := num(kv)
			if ok && float64(utf8.RuneCountInString(str)) < lim {
				fail("string shorter than %v", kv)
			}
		case "items":
			arr, ok := v.([]any)
			if !ok {
				continue
			}
			sub, _ := kv.(map[string]any)
			for i, x := range arr {
				errs = append(errs, s.check(sub, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		case "minItems", "maxItems":
			arr, ok := v.([]any)
			if !ok {
				continue
			}
			lim, _ := num(kv)
			if k == "minItems" && float64(len(arr)) < lim {
				fail("array has %d items, fewer than %v", len(arr), kv)
			}
			if k == "maxItems" && float64(len(arr)) > lim {
				fail("array has %d items, more than %v", len(arr), kv)
			}
		case "oneOf":
			list, _ := kv.([]any)
			n := 0
			var why []string
			for i, x := range list {
				sub, _ := x.(map[string]any)
				if e := s.check(sub, v, path); len(e) == 0 {
					n++
				} else {
					why = append(why, fmt.Sprintf("[%d] %s", i, strings.Join(e, "; ")))
				}
			}
			if n != 1 {
				fail("matches %d of the oneOf alternatives, want exactly 1 (%s)", n, strings.Join(why, " | "))
			}
		}
	}
	return errs
}

func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func hasType(v any, t string) bool {
	switch t {
	case "null":
		return v == nil
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "number":
		_, ok := num(v)
		return ok
	case "integer":
		f, ok := num(v)
		return ok && !math.IsInf(f, 0) && f == math.Trunc(f)
	}
	return false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// equal compares two decoded JSON values; numbers by value.
func equal(a, b any) bool {
	if x, ok := num(a); ok {
		y, ok2 := num(b)
		return ok2 && x == y
	}
	switch av := a.(type) {
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !equal(av[i], bv[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !equal(x, y) {
				return false
			}
		}
		return true
	}
	return a == b
}

// SpecDir finds the repository's spec/ directory by walking up from the
// working directory (go test runs in the package's folder).
func SpecDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "spec")
		if _, err := os.Stat(filepath.Join(cand, "cli.json")); err == nil {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("spec/cli.json not found above the working directory")
		}
		dir = parent
	}
}
