//! The command line, read from spec/cli.json itself (built in with include_str!): the flag
//! table, ranges, defaults and the im benchmark's constants all come from that file, so a
//! change there needs no edit here. The rules and messages are the other languages' (the
//! shared cases in tests/conformance/parser-cases.json check them): `--name value` or
//! `--name=value`, each flag at most once, exit 2 with one `error: ` line naming the problem.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const LANGUAGE: &str = "im_loadgen";
pub const SPEC_JSON: &str = include_str!("../../../spec/cli.json");

/// One flag's value, converted by its spec type.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(i64),
    Num(f64),
    Text(String),
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Action {
    /// A run: the benchmark, its role and every param (defaults filled in), and the variant.
    Run {
        role: String,
        variant: String,
        params: BTreeMap<String, Val>,
    },
    Version,
    Help,
}

pub fn spec() -> Value {
    serde_json::from_str(SPEC_JSON).expect("the built-in spec/cli.json is valid JSON")
}

fn names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default()
}

/// Parses args (the program name left out) against the spec, for this language.
pub fn parse(spec: &Value, args: &[String]) -> Result<Action, String> {
    let me = &spec["languages"][LANGUAGE];
    let mine = names(&me["benchmarks"]);
    let expected = format!("expected one of: {}, --version, --help", mine.join(", "));
    let (first, rest) = match args.split_first() {
        None => return Err(format!("missing sub-command ({expected})")),
        Some((f, r)) => (f.as_str(), r),
    };
    if first == "--version" {
        return match rest.first() {
            Some(x) => Err(format!("--version takes no arguments, got {x:?}")),
            None => Ok(Action::Version),
        };
    }
    if first == "--help" || first == "-h" || rest.iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Action::Help);
    }
    let Some(bench) = spec["benchmarks"].get(first) else {
        return Err(format!("unknown sub-command {first:?} ({expected})"));
    };
    if !mine.iter().any(|b| b == first) {
        return Err(format!(
            "{LANGUAGE} does not implement the benchmark {first} (it implements: {})",
            mine.join(", ")
        ));
    }
    let roles = bench["roles"].as_object().cloned().unwrap_or_default();
    let all_roles = roles.keys().cloned().collect::<Vec<_>>().join(", ");
    let role = match rest.first() {
        Some(r) if !r.starts_with('-') => r.as_str(),
        _ => return Err(format!("{first} needs a role first: one of {all_roles}")),
    };
    let Some(role_spec) = roles.get(role) else {
        return Err(format!(
            "unknown role {role:?} for {first} (expected one of: {all_roles})"
        ));
    };
    let my_roles = names(&me["roles"][first]);
    if !my_roles.iter().any(|r| r == role) {
        return Err(format!(
            "{LANGUAGE} does not implement the benchmark {first} role {role} (it implements: {})",
            my_roles.join(", ")
        ));
    }
    let flags = role_spec["flags"].as_object().cloned().unwrap_or_default();
    let given = split_flags(first, &flags, &rest[1..])?;
    let mut params = BTreeMap::new();
    let mut variant = String::new();
    for (name, f) in &flags {
        let text = match (given.get(name), &f["default"]) {
            (Some(t), _) => t.clone(),
            (None, _) if f["required"] == Value::Bool(true) => {
                return Err(format!("missing required flag {name} for {first}"));
            }
            (None, Value::Null) => continue,
            (None, Value::String(s)) => s.clone(),
            (None, d) => d.to_string(),
        };
        let v = convert(name, f, &text)?;
        match (f["param"].as_str(), v) {
            (None, Val::Text(t)) => variant = t,
            (Some(p), v) => {
                params.insert(p.to_string(), v);
            }
            (None, _) => {}
        }
    }
    let built = names(&me["variants"]);
    if !variant.is_empty() && !built.contains(&variant) {
        return Err(format!(
            "--variant {variant} is not implemented for {LANGUAGE} {first} (only: {})",
            built.join(", ")
        ));
    }
    Ok(Action::Run {
        role: role.to_string(),
        variant,
        params,
    })
}

/// The `--name value` / `--name=value` pairs, each a flag of the table, at most once.
fn split_flags(bench: &str, flags: &Map<String, Value>, rest: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut it = rest.iter().peekable();
    while let Some(tok) = it.next() {
        if !tok.starts_with("--") || tok == "--" {
            return Err(format!(
                "unexpected argument {tok:?} for {bench} (flags are --name value)"
            ));
        }
        let (name, inline) = match tok.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (tok.clone(), None),
        };
        if !flags.contains_key(&name) {
            return Err(format!("unknown flag {name} for {bench}"));
        }
        let value = match inline {
            Some(v) => v,
            // a following --flag is never taken as this flag's value
            None => match it.peek() {
                Some(v) if !v.starts_with("--") => it.next().cloned().unwrap_or_default(),
                _ => String::new(),
            },
        };
        if value.is_empty() {
            return Err(format!("{name} needs a value"));
        }
        if out.insert(name.clone(), value).is_some() {
            return Err(format!("{name} given more than once"));
        }
    }
    Ok(out)
}

fn plain_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Converts and range-checks one value by the flag's spec (type, min, min_exclusive, max).
fn convert(name: &str, f: &Value, text: &str) -> Result<Val, String> {
    let lo = f["min"].as_f64();
    let lo_open = f["min_exclusive"].as_f64();
    let hi = f["max"].as_f64();
    let inside = |x: f64| lo.is_none_or(|l| x >= l) && lo_open.is_none_or(|l| x > l) && hi.is_none_or(|h| x <= h);
    let range = || {
        let left = match (lo, lo_open) {
            (Some(l), _) => format!("[{l}"),
            (None, Some(l)) => format!("({l}"),
            _ => "(-inf".to_string(),
        };
        let right = hi.map(|h| format!("{h}]")).unwrap_or_else(|| "inf)".into());
        format!("{name}: {text} is out of range {left}, {right}")
    };
    match f["type"].as_str() {
        Some("int") => {
            if !plain_digits(text) {
                return Err(format!("{name}: {text:?} is not a plain decimal integer"));
            }
            let v: i64 = text.parse().map_err(|_| range())?;
            if inside(v as f64) {
                Ok(Val::Int(v))
            } else {
                Err(range())
            }
        }
        Some("number") => {
            let (int, frac) = text.split_once('.').unwrap_or((text, ""));
            let ok = !(int.is_empty() && frac.is_empty())
                && (int.is_empty() || plain_digits(int))
                && (frac.is_empty() || plain_digits(frac));
            if !ok {
                return Err(format!("{name}: {text:?} is not a plain decimal number"));
            }
            let x: f64 = format!("0{int}.{frac}0").parse().map_err(|_| range())?;
            if x.is_finite() && inside(x) {
                Ok(Val::Num(x))
            } else {
                Err(range())
            }
        }
        Some("enum") => {
            let values = names(&f["values"]);
            if values.iter().any(|v| v == text) {
                Ok(Val::Text(text.to_string()))
            } else {
                Err(format!("{name}: {text:?} is not one of {}", values.join(", ")))
            }
        }
        other => Err(format!("{name}: spec type {other:?} is not supported by {LANGUAGE}")),
    }
}

/// The --help text, from the spec: every role this language implements, with its flags.
pub fn usage(spec: &Value) -> String {
    let me = &spec["languages"][LANGUAGE];
    let mut out = String::from("usage:\n");
    for bench in names(&me["benchmarks"]) {
        for role in names(&me["roles"][&bench]) {
            out.push_str(&format!("  serverbench-im-loadgen {bench} {role}"));
            for (name, f) in spec["benchmarks"][&bench]["roles"][&role]["flags"]
                .as_object()
                .into_iter()
                .flatten()
            {
                let arg = match f["type"].as_str() {
                    Some("enum") => names(&f["values"]).join("|"),
                    _ => name.trim_start_matches("--").replace('-', "_").to_uppercase(),
                };
                if f["required"] == Value::Bool(true) {
                    out.push_str(&format!(" {name} {arg}"));
                } else {
                    out.push_str(&format!(" [{name} {arg}]"));
                }
            }
            out.push('\n');
        }
    }
    out.push_str(
        "  serverbench-im-loadgen --version | --help\n\n\
         Connects --clients IRC clients to the server on 127.0.0.1:--port and runs --mode (docs/im.md);\n\
         prints one JSON record on stdout. Exit: 0 ok, 1 run invalid (validation.ok false), 2 bad command line.\n",
    );
    out
}

/// The im benchmark's constants (spec/cli.json benchmarks.im): a number the generator needs.
pub fn im_number(spec: &Value, key: &str) -> f64 {
    spec["benchmarks"]["im"][key]
        .as_f64()
        .unwrap_or_else(|| panic!("spec/cli.json benchmarks.im.{key} is not a number"))
}
