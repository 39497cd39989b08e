//! The command line, parsed from spec/cli.json itself (built in with include_str!): there
//! is no flag table here, so a flag, benchmark, role or variant added to cli.json is parsed
//! without a Rust edit. Same rules and messages as the Go parser (src/go/internal/cli).

use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const LANGUAGE: &str = "rust_tokio";
pub const SPEC_JSON: &str = include_str!("../../../spec/cli.json");

pub const EXIT_OK: i32 = 0;
pub const EXIT_RUN_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

/// A flag's parsed value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(i64),
    Num(f64),
    Str(String),
}

/// A parsed, range-checked command line for one benchmark.
#[derive(Debug, Default)]
pub struct Config {
    pub benchmark: String,
    pub role: String,    // "" for benchmarks without roles
    pub variant: String, // value of the flag whose param is null (--variant)
    /// param -> value, defaults filled in; knob params hold "variant" unless given.
    pub params: BTreeMap<String, Val>,
}

impl Config {
    pub fn int(&self, p: &str) -> i64 {
        match self.params.get(p) {
            Some(Val::Int(v)) => *v,
            other => panic!("param {p} is not an int: {other:?}"),
        }
    }
    pub fn num(&self, p: &str) -> f64 {
        match self.params.get(p) {
            Some(Val::Num(v)) => *v,
            other => panic!("param {p} is not a number: {other:?}"),
        }
    }
    pub fn str(&self, p: &str) -> &str {
        match self.params.get(p) {
            Some(Val::Str(v)) => v,
            other => panic!("param {p} is not an enum: {other:?}"),
        }
    }
}

pub enum Action {
    Run(Config),
    Version,
    Help,
}

pub fn spec() -> Value {
    serde_json::from_str(SPEC_JSON).expect("built-in cli.json is valid JSON")
}

fn strs(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
}

/// Reads args (without the program name) for this language.
pub fn parse(spec: &Value, args: &[String]) -> Result<Action, String> {
    let lang = &spec["languages"][LANGUAGE];
    let benches = strs(lang.get("benchmarks")).unwrap_or_default();
    let names = benches.join(", ");
    let Some(first) = args.first() else {
        return Err(format!(
            "missing sub-command (expected one of: {names}, --version, --help)"
        ));
    };
    match first.as_str() {
        "--version" => {
            if let Some(x) = args.get(1) {
                return Err(format!("--version takes no value or arguments, got {x:?}"));
            }
            return Ok(Action::Version);
        }
        "--help" | "-h" => return Ok(Action::Help),
        _ => {}
    }
    if args[1..].iter().any(|a| a == "--help" || a == "-h") {
        return Ok(Action::Help);
    }
    let Some(bench) = spec["benchmarks"].get(first) else {
        return Err(format!(
            "unknown sub-command {first:?} (expected one of: {names}, --version, --help)"
        ));
    };
    if !benches.contains(first) {
        return Err(format!(
            "{LANGUAGE} does not implement the benchmark {first} (it implements: {names})"
        ));
    }
    let mut cfg = Config {
        benchmark: first.clone(),
        ..Default::default()
    };
    let mut rest = &args[1..];
    let flags = if let Some(roles) = bench.get("roles").and_then(Value::as_object) {
        let role_names: Vec<&String> = roles.keys().collect();
        let all = role_names.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ");
        let Some(r) = rest.first().filter(|r| !r.starts_with('-')) else {
            return Err(format!("{first} needs a role first: one of {all}"));
        };
        let Some(role) = roles.get(r) else {
            return Err(format!("unknown role {r:?} for {first} (expected one of: {all})"));
        };
        if let Some(implemented) = strs(lang["roles"].get(first))
            && !implemented.contains(r)
        {
            return Err(format!(
                "{LANGUAGE} does not implement the benchmark {first} role {r} (it implements: {})",
                implemented.join(", ")
            ));
        }
        cfg.role = r.clone();
        rest = &rest[1..];
        role["flags"].as_object().cloned().unwrap_or_default()
    } else {
        bench["flags"].as_object().cloned().unwrap_or_default()
    };
    let (params, variant) = parse_flags(first, &flags, rest)?;
    cfg.params = params;
    cfg.variant = variant;
    if !cfg.variant.is_empty() {
        let implemented = strs(lang.get("variants"))
            .or_else(|| strs(spec.get("implemented_variants")))
            .unwrap_or_default();
        if !implemented.contains(&cfg.variant) {
            return Err(format!(
                "--variant {} is not implemented for {LANGUAGE} {first} (only: {})",
                cfg.variant,
                implemented.join(", ")
            ));
        }
    }
    Ok(Action::Run(cfg))
}

type Params = BTreeMap<String, Val>;

fn parse_flags(bench: &str, flags: &Map<String, Value>, rest: &[String]) -> Result<(Params, String), String> {
    let mut raw: BTreeMap<String, String> = BTreeMap::new();
    let mut i = 0;
    while i < rest.len() {
        let tok = &rest[i];
        if !tok.starts_with("--") || tok == "--" {
            return Err(format!(
                "unexpected argument {tok:?} for {bench} (flags are --name value)"
            ));
        }
        let (name, mut val, has_eq) = match tok.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string(), true),
            None => (tok.clone(), String::new(), false),
        };
        if !flags.contains_key(&name) {
            return Err(format!("unknown flag {name} for {bench}"));
        }
        if raw.contains_key(&name) {
            return Err(format!("{name} given more than once"));
        }
        if !has_eq {
            // A following "--flag" is never taken as this flag's value.
            match rest.get(i + 1) {
                Some(v) if !v.starts_with("--") => {
                    val = v.clone();
                    i += 1;
                }
                _ => return Err(format!("{name} needs a value")),
            }
        }
        if val.is_empty() {
            return Err(format!("{name} needs a value"));
        }
        raw.insert(name, val);
        i += 1;
    }
    let mut params = Params::new();
    let mut variant = String::new();
    for (name, f) in flags {
        let v = match raw.get(name) {
            Some(text) => Some(check(name, f, text)?),
            None if f["required"].as_bool() == Some(true) => {
                return Err(format!("missing required flag {name} for {bench}"));
            }
            None => match &f["default"] {
                Value::Null => None,
                Value::String(s) => Some(check(name, f, s)?),
                other => Some(check(name, f, &other.to_string())?),
            },
        };
        match (f["param"].as_str(), v) {
            (None, Some(Val::Str(s))) => variant = s,
            (Some(p), Some(v)) => {
                params.insert(p.to_string(), v);
            }
            _ => {}
        }
    }
    Ok((params, variant))
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// 60, 0.5, .5 and 5. : digits with at most one point, no sign or exponent.
fn is_decimal(s: &str) -> bool {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return false;
    }
    (int.is_empty() || is_digits(int)) && (frac.is_empty() || is_digits(frac))
}

fn range_text(f: &Value) -> String {
    let (lo, open) = if let Some(m) = f.get("min") {
        (m.to_string(), "[")
    } else if let Some(m) = f.get("min_exclusive") {
        (m.to_string(), "(")
    } else {
        ("-inf".into(), "(")
    };
    let hi = f.get("max").map(|m| format!("{m}]")).unwrap_or_else(|| "inf)".into());
    format!("{open}{lo}, {hi}")
}

/// Converts a textual value. Int bounds are compared as integers; number bounds as f64
/// (cli.json's number bounds are small integers, exact in f64).
fn check(name: &str, f: &Value, val: &str) -> Result<Val, String> {
    let bound = |k: &str| f.get(k).and_then(Value::as_f64);
    let in_range = |x: f64| {
        bound("min").is_none_or(|lo| x >= lo)
            && bound("max").is_none_or(|hi| x <= hi)
            && bound("min_exclusive").is_none_or(|lo| x > lo)
    };
    let out_of_range = || format!("{name}: {val} is out of range {}", range_text(f));
    match f["type"].as_str().unwrap_or("") {
        "int" => {
            if !is_digits(val) {
                return Err(format!("{name}: {val:?} is not a plain decimal integer"));
            }
            let v: i64 = val.parse().map_err(|_| out_of_range())?;
            let ibound = |k: &str| f.get(k).and_then(Value::as_i64);
            let ok = ibound("min").is_none_or(|lo| v >= lo)
                && ibound("max").is_none_or(|hi| v <= hi)
                && ibound("min_exclusive").is_none_or(|lo| v > lo);
            if ok { Ok(Val::Int(v)) } else { Err(out_of_range()) }
        }
        "number" => {
            if !is_decimal(val) {
                return Err(format!("{name}: {val:?} is not a plain decimal number"));
            }
            let x: f64 = format!("0{}", val.trim_end_matches('.'))
                .parse()
                .map_err(|_| out_of_range())?;
            if x.is_finite() && in_range(x) {
                Ok(Val::Num(x))
            } else {
                Err(out_of_range())
            }
        }
        "enum" => {
            let values = strs(f.get("values")).unwrap_or_default();
            if values.iter().any(|v| v == val) {
                Ok(Val::Str(val.to_string()))
            } else {
                Err(format!("{name}: {val:?} is not one of {}", values.join(", ")))
            }
        }
        t => Err(format!("{name}: cli.json type {t:?} is not supported by this program")),
    }
}

/// Refuses a knob flag (cli.json "knob") given any value but "variant": rust_tokio has
/// none of the original programs' quirks (it implements only fair), so nothing may run
/// under a label it does not honour.
pub fn refuse_knobs(spec: &Value, cfg: &Config) -> Result<(), String> {
    let flags = &spec["benchmarks"][&cfg.benchmark]["flags"];
    for (name, f) in flags.as_object().into_iter().flatten() {
        let (Some(knob), Some(param)) = (f.get("knob"), f["param"].as_str()) else {
            continue;
        };
        if let Some(Val::Str(v)) = cfg.params.get(param)
            && v != "variant"
        {
            let langs = strs(knob.get("languages")).unwrap_or_default().join(" ");
            return Err(format!(
                "{name} is not a knob of {LANGUAGE} {} (only [{langs}])",
                cfg.benchmark
            ));
        }
    }
    Ok(())
}

/// The --help text, generated from the spec.
pub fn usage(spec: &Value) -> String {
    let mut b = String::from("usage:\n");
    let line = |b: &mut String, cmd: &str, flags: &Value| {
        b.push_str(&format!("  serverbench {cmd}"));
        for (n, f) in flags.as_object().into_iter().flatten() {
            let arg = if f["type"] == "enum" {
                strs(f.get("values")).unwrap_or_default().join("|")
            } else {
                n.trim_start_matches("--").replace('-', "_").to_uppercase()
            };
            if f["required"].as_bool() == Some(true) {
                b.push_str(&format!(" {n} {arg}"));
            } else {
                b.push_str(&format!(" [{n} {arg}]"));
            }
        }
        b.push('\n');
    };
    let lang = &spec["languages"][LANGUAGE];
    for name in strs(lang.get("benchmarks")).unwrap_or_default() {
        let bench = &spec["benchmarks"][&name];
        match bench.get("roles").and_then(Value::as_object) {
            None => line(&mut b, &name, &bench["flags"]),
            Some(roles) => {
                let implemented = strs(lang["roles"].get(&name));
                for (r, role) in roles {
                    if implemented.as_ref().is_none_or(|i| i.contains(r)) {
                        line(&mut b, &format!("{name} {r}"), &role["flags"]);
                    }
                }
            }
        }
    }
    b.push_str(
        "  serverbench --version\n  serverbench --help\n\n\
         Flags are written --name value or --name=value, in any order, each at most once.\n\
         Prints one JSON record on stdout. Scheduler threads are set from outside: TOKIO_WORKER_THREADS=C.\n\
         Exit: 0 ok, 1 run failed (validation.ok false), 2 bad command line.\n",
    );
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn err(s: &str) -> String {
        match parse(&spec(), &args(s)) {
            Err(e) => e,
            Ok(_) => panic!("{s}: accepted"),
        }
    }

    #[test]
    fn defaults_and_forms() {
        let Ok(Action::Run(c)) = parse(&spec(), &args("pingping --message-bytes=5000 --repetitions 7")) else {
            panic!("refused")
        };
        assert_eq!((c.int("message_bytes"), c.int("repetitions")), (5000, 7));
        assert_eq!((c.str("payload"), c.variant.as_str()), ("copy", "fair"));
        let Ok(Action::Run(c)) = parse(&spec(), &args("throughput --pairs 1 --message-bytes 1 --duration-s .5")) else {
            panic!("refused")
        };
        assert_eq!((c.num("duration_s"), c.int("report_every")), (0.5, 10000));
    }

    #[test]
    fn refusals_name_the_flag() {
        assert!(err("pingping --repetitions 1").contains("--message-bytes"));
        assert!(err("pingping --message-bytes 0 --repetitions 1").contains("out of range"));
        assert!(err("pingping --message-bytes 1e3 --repetitions 1").contains("plain decimal integer"));
        assert!(err("throughput --pairs 1 --message-bytes 1 --duration-s nan").contains("--duration-s"));
        assert!(err("pingping --message-bytes 1 --repetitions 1 --repetitions 2").contains("more than once"));
        assert!(err("pingping --message-bytes 1 --repetitions 1 --variant paper").contains("paper"));
        assert!(err("tcp_pingpong server").contains("does not implement"));
        assert!(err("bogus").contains("bogus"));
    }

    #[test]
    fn knobs_are_refused() {
        let Ok(Action::Run(c)) = parse(&spec(), &args("pingping --message-bytes 1 --repetitions 1 --send copy")) else {
            panic!("refused")
        };
        assert!(refuse_knobs(&spec(), &c).unwrap_err().contains("--send"));
    }
}
