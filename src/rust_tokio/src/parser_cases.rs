//! The shared command-line cases (tests/conformance/parser-cases.json, generated from
//! spec/cli.json) run in process through command_line, the part of run that main uses
//! before any runtime starts: no process, socket or benchmark.

use crate::cli::{self, Action, Val};
use serde_json::Value;
use std::path::PathBuf;

/// The repository root: the first directory up from the working directory (cargo test
/// runs in src/rust_tokio) that holds spec/cli.json.
fn repo_root() -> PathBuf {
    let start = std::env::current_dir().expect("working directory");
    start
        .ancestors()
        .find(|d| d.join("spec/cli.json").is_file())
        .unwrap_or_else(|| panic!("no spec/cli.json above {}", start.display()))
        .to_path_buf()
}

/// SHA-256 (FIPS 180-4) of data as lower-case hex; no crate of this program has one.
fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in msg.chunks_exact(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for i in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            (hh, g, f, e, d, c, b, a) = (g, f, e, d.wrapping_add(t1), c, b, a, t1.wrapping_add(t2));
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[test]
fn sha256_known_answers() {
    assert_eq!(
        sha256_hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        sha256_hex(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
}

/// Lines as Python's str.splitlines cuts them, as the process-level suite counted them.
fn lines(s: &str) -> impl Iterator<Item = &str> {
    s.split([
        '\n', '\r', '\x0b', '\x0c', '\x1c', '\x1d', '\x1e', '\u{85}', '\u{2028}', '\u{2029}',
    ])
}

/// The process-level suite's rule: a float on either side is compared with a relative
/// tolerance, anything else exactly.
fn same(want: &Value, got: &Val) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs());
    match got {
        Val::Int(g) if want.is_f64() => close(want.as_f64().unwrap_or(f64::NAN), *g as f64),
        Val::Int(g) => want.as_i64() == Some(*g),
        Val::Num(g) => want.as_f64().is_some_and(|w| close(w, *g)),
        Val::Str(g) => want.as_str() == Some(g.as_str()),
    }
}

/// Runs one usage case; the contract's breaches, if any, as one text.
fn check_usage(spec: &Value, args: &[String], mentions: &[&str], usage_code: i64) -> Option<String> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = match crate::command_line(spec, args, &mut out, &mut err) {
        Err(code) => code,
        Ok(Action::Run(cfg)) => {
            // knob params hold "variant" in every accepted command: only noise here
            let params: Vec<_> = cfg
                .params
                .iter()
                .filter(|(_, v)| **v != Val::Str("variant".into()))
                .collect();
            return Some(format!("accepted: would run {} {params:?}", cfg.benchmark));
        }
        Ok(Action::Version) => return Some("accepted as --version".into()),
        Ok(Action::Help) => return Some("accepted as --help".into()),
    };
    let mut wrong = Vec::new();
    if i64::from(code) != usage_code {
        wrong.push(format!("exit {code}, want {usage_code}"));
    }
    if !out.is_empty() {
        wrong.push(format!("stdout {:?}", String::from_utf8_lossy(&out)));
    }
    let err = String::from_utf8_lossy(&err);
    let got: Vec<&str> = lines(&err).filter(|l| !l.trim().is_empty()).collect();
    match got.as_slice() {
        [line] if line.starts_with("error: ") => {
            let missing: Vec<&&str> = mentions.iter().filter(|m| !line.contains(**m)).collect();
            if !missing.is_empty() {
                wrong.push(format!("stderr {line:?} does not mention {missing:?}"));
            }
        }
        _ => wrong.push(format!("stderr is not one line starting \"error: \": {err:?}")),
    }
    (!wrong.is_empty()).then(|| wrong.join("; "))
}

/// Parses one valid case (nothing runs); the contract's breaches, if any, as one text.
/// Params are compared with the parser's: the records copy theirs from it (src/record.rs,
/// src/echo.rs). The parser also holds each knob's param, "variant" whenever the command
/// is accepted, which no record reports; that is the one extra it may have.
fn check_valid(spec: &Value, args: &[String], case: &Value) -> Option<String> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let cfg = match crate::command_line(spec, args, &mut out, &mut err) {
        Ok(Action::Run(cfg)) => cfg,
        Ok(Action::Version) => return Some("parsed as --version".into()),
        Ok(Action::Help) => return Some("parsed as --help".into()),
        Err(code) => {
            let err = String::from_utf8_lossy(&err);
            return Some(format!("refused: exit {code}, stderr {:?}", err.trim_end()));
        }
    };
    let mut wrong = Vec::new();
    if !out.is_empty() || !err.is_empty() {
        wrong.push(format!(
            "parsing wrote stdout {:?} stderr {:?}",
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&err)
        ));
    }
    if case["benchmark"].as_str() != Some(cfg.benchmark.as_str()) {
        wrong.push(format!("benchmark {}, want {}", cfg.benchmark, case["benchmark"]));
    }
    let variant = case["variant"].as_str();
    if variant.is_some_and(|v| v != cfg.variant) {
        wrong.push(format!("variant {}, want {}", cfg.variant, case["variant"]));
    }
    if variant.is_none_or(|v| v == "fair") {
        let want = case["params"].as_object().cloned().unwrap_or_default();
        for (p, w) in &want {
            match cfg.params.get(p) {
                Some(g) if same(w, g) => {}
                g => wrong.push(format!("params.{p} = {g:?}, want {w}")),
            }
        }
        let flags = match cfg.role.as_str() {
            "" => &spec["benchmarks"][&cfg.benchmark]["flags"],
            r => &spec["benchmarks"][&cfg.benchmark]["roles"][r]["flags"],
        };
        let knob_params: Vec<&str> = flags
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, f)| f.get("knob").is_some())
            .filter_map(|(_, f)| f["param"].as_str())
            .collect();
        for (p, g) in &cfg.params {
            let unreported_knob = knob_params.contains(&p.as_str()) && *g == Val::Str("variant".into());
            if !want.contains_key(p) && !unreported_knob {
                wrong.push(format!("params.{p} = {g:?} is not in the case's params"));
            }
        }
    }
    (!wrong.is_empty()).then(|| wrong.join("; "))
}

#[test]
fn shared_parser_cases() {
    let root = repo_root();
    let cli_bytes = std::fs::read(root.join("spec/cli.json")).expect("read spec/cli.json");
    let path = root.join("tests/conformance/parser-cases.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let cases: Value = serde_json::from_str(&text).expect("parser-cases.json is JSON");
    assert_eq!(
        cases["cli_json_sha256"].as_str(),
        Some(sha256_hex(&cli_bytes).as_str()),
        "tests/conformance/parser-cases.json was generated from another spec/cli.json: \
         run `python3 tests/python/conformance/cases.py`"
    );
    // The parser reads the copy built in; cargo rebuilds when spec/cli.json changes.
    assert!(
        cli::SPEC_JSON.as_bytes() == cli_bytes,
        "the built-in cli.json is not spec/cli.json"
    );
    let spec = cli::spec();
    let usage_code = cases["exit_codes"]["usage"].as_i64().expect("exit_codes.usage");
    let lang = &cases["languages"][cli::LANGUAGE];
    let (usage, valid) = (lang["usage"].as_array(), lang["valid"].as_array());
    let (Some(usage), Some(valid)) = (usage, valid) else {
        panic!("parser-cases.json has no usage and valid cases for {}", cli::LANGUAGE)
    };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("a list")
            .iter()
            .map(|s| s.as_str().expect("a string").to_string())
            .collect()
    };
    let mut failures = Vec::new();
    for case in usage {
        let args = strings(&case["args"]);
        let mentions = strings(&case["mentions"]);
        let mentions: Vec<&str> = mentions.iter().map(String::as_str).collect();
        if let Some(why) = check_usage(&spec, &args, &mentions, usage_code) {
            failures.push(format!("usage {args:?}: {why}"));
        }
    }
    for case in valid {
        let args = strings(&case["args"]);
        if let Some(why) = check_valid(&spec, &args, case) {
            failures.push(format!("valid {args:?}: {why}"));
        }
    }
    let checked = format!(
        "{} cases of {} ({} usage, {} valid)",
        usage.len() + valid.len(),
        cli::LANGUAGE,
        usage.len(),
        valid.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {checked} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(!usage.is_empty() && !valid.is_empty(), "no cases in {checked}");
    println!("checked {checked}");
}
