package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// Knobs are the paper variant's quirks, one flag each (spec/cli.json
// benchmarks.<b>.flags.<flag>.knob). A knob flag's default is "variant": fair
// and mixed take the knob's fair value, paper its paper value. Resolution
// refuses a knob the language does not have and a value that contradicts the
// variant (fair or paper), so that nothing runs under a wrong label.
type Knobs map[string]string // param -> resolved value

type knobSpec struct {
	Param *string `json:"param"`
	Knob  *struct {
		Fair      string          `json:"fair"`
		Paper     json.RawMessage `json:"paper"` // "v" or {"lang": "v"}
		Languages []string        `json:"languages"`
	} `json:"knob"`
}

// paperValue is the knob's paper value for lang.
func paperValue(raw json.RawMessage, lang string) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m map[string]string
	_ = json.Unmarshal(raw, &m)
	return m[lang]
}

// ResolveKnobs returns the knob values of one run. spec is cli.json, params the
// parsed flags (knob params hold "variant" unless given). The error is the one
// line the command prints before exiting 2.
func ResolveKnobs(spec []byte, benchmark, lang, variant string, params map[string]any) (Knobs, error) {
	var s struct {
		Benchmarks map[string]struct {
			Flags map[string]knobSpec `json:"flags"`
		} `json:"benchmarks"`
	}
	if err := json.NewDecoder(bytes.NewReader(spec)).Decode(&s); err != nil {
		return nil, fmt.Errorf("cli.json: %w", err)
	}
	flags := s.Benchmarks[benchmark].Flags
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	sort.Strings(names)
	out := Knobs{}
	for _, flag := range names {
		f := flags[flag]
		if f.Knob == nil || f.Param == nil {
			continue
		}
		given, _ := params[*f.Param].(string)
		has := false
		for _, l := range f.Knob.Languages {
			has = has || l == lang
		}
		if !has {
			if given != "" && given != "variant" {
				return nil, fmt.Errorf("%s is not a knob of %s %s (only %v)", flag, lang, benchmark, f.Knob.Languages)
			}
			continue
		}
		fair, paper := f.Knob.Fair, paperValue(f.Knob.Paper, lang)
		v := given
		switch {
		case given == "" || given == "variant":
			v = fair
			if variant == "paper" {
				v = paper
			}
		case variant == "fair" && given != fair:
			return nil, fmt.Errorf("%s %s contradicts --variant fair (fair means %s; use --variant mixed)", flag, given, fair)
		case variant == "paper" && given != paper:
			return nil, fmt.Errorf("%s %s contradicts --variant paper (paper means %s for %s; use --variant mixed)", flag, given, paper, lang)
		}
		out[*f.Param] = v
	}
	return out, nil
}

// Is reports whether knob param has value v.
func (k Knobs) Is(param, v string) bool { return k[param] == v }

// Wall-clock milliseconds: the originals timed with ms timestamps
// (Go UnixNano()/1e6, Erlang system_time(millisecond), JVM currentTimeMillis)
// and printed (t1-t0)/1000. ReportedSeconds reproduces that print.
func ReportedSeconds(t0ms, t1ms int64) float64 { return float64(t1ms-t0ms) / 1000 }
