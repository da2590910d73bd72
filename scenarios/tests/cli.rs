//! The `zkdst` command's exit codes (0 pass, 1 violation, 2 unknown, 3
//! usage or input error) and `zkdst check`'s verdict words, from the built
//! binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use zkdst_checker::history::{Event, History, Op, Outcome, Value};

fn zkdst(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zkdst"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .args(args)
        .output()
        .expect("run zkdst")
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed")
}

fn first_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

fn edn(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../checker/tests/data/edn")
        .join(name)
        .display()
        .to_string()
}

/// A scratch file, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, text: &str) -> Scratch {
        Scratch::bytes(name, text.as_bytes())
    }
    fn bytes(name: &str, bytes: &[u8]) -> Scratch {
        let p = std::env::temp_dir().join(format!("zkdst-cli-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        Scratch(p)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Two clients both holding lock /l from 15 to 30 ms.
fn two_holders() -> History {
    let mut h = History::new();
    let ms = 1_000_000;
    let acquire = Op::Acquire {
        lock: "/l".into(),
        shared: false,
    };
    for (id, client, t0, t1, op, value) in [
        (0, 1, 0, 10, acquire.clone(), Value::Token { token: 1 }),
        (1, 2, 5, 15, acquire, Value::Token { token: 2 }),
        (2, 1, 30, 31, Op::Release { lock: "/l".into() }, Value::Unit),
    ] {
        h.events.push(Event::Invoke {
            id,
            time: t0 * ms,
            client,
            session: None,
            op,
            background: false,
        });
        h.events.push(Event::Complete {
            id,
            time: t1 * ms,
            client,
            outcome: Outcome::Ok { value },
            zxid: None,
        });
    }
    h.events.sort_by_key(Event::time);
    h
}

#[test]
fn linearizability_checks_say_linearizable_or_not_and_exit_0_or_1() {
    let o = zkdst(&["check", &edn("lines.edn"), "--format", "edn", "--model", "cas-register"]);
    assert_eq!((code(&o), first_line(&o).as_str()), (0, "linearizable"), "{o:?}");
    let o = zkdst(&[
        "check",
        &edn("knossos_vector.edn"),
        "--format",
        "edn",
        "--model",
        "cas-register",
    ]);
    assert_eq!((code(&o), first_line(&o).as_str()), (1, "NOT linearizable"), "{o:?}");
}

#[test]
fn check_reads_every_history_encoding_and_names_damage() {
    use zkdst_checker::history::Encoding;
    for (name, enc) in [
        ("h.json", Encoding::Json),
        ("h.jsonl", Encoding::JsonLines),
        ("h.jsonl.gz", Encoding::JsonLinesGz),
    ] {
        let f = Scratch::bytes(name, &two_holders().encode(enc));
        let o = zkdst(&["check", f.path(), "--format", "zkdst", "--checker", "mutex"]);
        assert_eq!(
            (code(&o), first_line(&o).as_str()),
            (1, "mutex: violation"),
            "{name}: {o:?}"
        );
    }
    let gz = two_holders().encode(Encoding::JsonLinesGz);
    let cut = Scratch::bytes("cut.jsonl.gz", &gz[..gz.len() - 9]);
    let o = zkdst(&["check", cut.path(), "--format", "zkdst"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{o:?}");
    assert!(
        err.contains(&format!("{}:1: expected a zkdst history", cut.path())) && err.contains("gzip"),
        "{err}"
    );
    let lines = String::from_utf8(two_holders().encode(Encoding::JsonLines)).unwrap();
    let mut lines: Vec<String> = lines.lines().map(str::to_string).collect();
    lines[2] = lines[2].replacen("\"time\"", "\"time\" 5", 1);
    let broken = Scratch::new("broken.jsonl", &lines.join("\n"));
    let o = zkdst(&["check", broken.path(), "--format", "zkdst"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(code(&o), 3, "{o:?}");
    assert!(
        err.contains(&format!("{}:3:", broken.path())),
        "the second event's line: {err}"
    );
}

#[test]
fn checkers_say_pass_violation_or_unknown_and_exit_0_1_or_2() {
    let empty = Scratch::new("empty.json", &History::new().to_json());
    let o = zkdst(&["check", empty.path(), "--format", "zkdst"]);
    assert_eq!(
        (code(&o), first_line(&o).as_str()),
        (0, "zk-consistency: pass"),
        "{o:?}"
    );

    let bad = Scratch::new("two-holders.json", &two_holders().to_json());
    let o = zkdst(&["check", bad.path(), "--format", "zkdst", "--checker", "mutex"]);
    assert_eq!((code(&o), first_line(&o).as_str()), (1, "mutex: violation"), "{o:?}");

    // No operations: progress cannot tell.
    let o = zkdst(&["check", empty.path(), "--format", "zkdst", "--checker", "progress"]);
    assert_eq!((code(&o), first_line(&o).as_str()), (2, "progress: unknown"), "{o:?}");

    // A violation outranks an unknown; every verdict is on the first line.
    let o = zkdst(&[
        "check",
        bad.path(),
        "--format",
        "zkdst",
        "--checker",
        "semaphore",
        "--checker",
        "mutex",
    ]);
    assert_eq!(
        (code(&o), first_line(&o).as_str()),
        (1, "semaphore: unknown, mutex: violation"),
        "{o:?}"
    );

    // Recipe checkers run on third-party histories too.
    let o = zkdst(&["check", &edn("list.edn"), "--format", "edn", "--checker", "mutex"]);
    assert_eq!((code(&o), first_line(&o).as_str()), (0, "mutex: pass"), "{o:?}");
}

#[test]
fn every_listed_checker_runs_through_check() {
    let list = zkdst(&["list"]);
    assert_eq!(code(&list), 0, "{list:?}");
    let stdout = String::from_utf8_lossy(&list.stdout).to_string();
    let names: Vec<&str> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("checkers: "))
        .expect("a checkers: line")
        .split(", ")
        .collect();
    for want in ["mutex", "zk-consistency", "progress", "semaphore"] {
        assert!(names.contains(&want), "{want} not listed: {names:?}");
    }
    let h = Scratch::new("list.json", &two_holders().to_json());
    for name in names {
        let o = zkdst(&["check", h.path(), "--format", "zkdst", "--checker", name]);
        let line = first_line(&o);
        assert!(
            (0..=2).contains(&code(&o)) && line.starts_with(&format!("{name}: ")),
            "{name}: exit {}, first line {line:?}, stderr {}",
            code(&o),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn a_bad_seed_wall_limit_is_a_usage_error_naming_it() {
    let o = Command::new(env!("CARGO_BIN_EXE_zkdst"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env("ZKDST_SEED_WALL_S", "soon")
        .args(["run", "scenarios/lock.toml", "--seed", "0"])
        .output()
        .expect("run zkdst");
    assert_eq!(code(&o), 3);
    assert!(String::from_utf8_lossy(&o.stderr).contains("ZKDST_SEED_WALL_S=\"soon\""));
}

#[test]
fn usage_and_input_errors_exit_3() {
    let cases: [&[&str]; 7] = [
        &[],
        &["frobnicate"],
        &["check"],
        &["check", "x.json", "--format", "zkdst", "--bogus"],
        &["check", "/nonexistent/h.json", "--format", "zkdst"],
        &["check", "x.json", "--format", "json"],
        &["run", "/nonexistent/s.toml"],
    ];
    for args in cases {
        let o = zkdst(args);
        assert_eq!(code(&o), 3, "{args:?}: {o:?}");
        assert!(!o.stderr.is_empty(), "{args:?}: says why on stderr");
    }
    let malformed = Scratch::new(
        "malformed.edn",
        "[{:type :invoke, :f :read, :process 0}\n {:type :ok :f}\n",
    );
    let o = zkdst(&["check", malformed.path(), "--format", "edn", "--model", "cas-register"]);
    assert_eq!(code(&o), 3, "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("malformed.edn:2:2: expected"), "{err}");

    let empty = Scratch::new("conflict.json", &History::new().to_json());
    let o = zkdst(&[
        "check",
        empty.path(),
        "--format",
        "zkdst",
        "--checker",
        "mutex",
        "--model",
        "mutex",
    ]);
    assert_eq!(code(&o), 3, "--model and --checker together: {o:?}");
    let o = zkdst(&["check", empty.path(), "--format", "zkdst", "--checker", "mutexx"]);
    assert_eq!(code(&o), 3, "unknown checker: {o:?}");
}

#[test]
fn help_documents_the_exit_codes_and_exits_0() {
    for args in [&["--help"][..], &["check", "--help"]] {
        let o = zkdst(args);
        assert_eq!(code(&o), 0, "{args:?}");
        let text = String::from_utf8_lossy(&o.stdout);
        for want in [
            "Exit codes",
            "0  pass",
            "1  violation",
            "2  unknown",
            "3  usage or input error",
        ] {
            assert!(text.contains(want), "{args:?} lacks {want:?}:\n{text}");
        }
    }
    assert_eq!(code(&zkdst(&["--version"])), 0);
}

#[test]
fn regress_add_refuses_duplicates_and_a_malformed_file_is_named() {
    let list = zkdst(&["regress", "list"]);
    assert_eq!(code(&list), 0, "{list:?}");
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("regression seed(s) in scenarios/regressions.toml"),
        "{list:?}"
    );

    let file = Scratch::new("regressions.toml", "");
    std::fs::remove_file(&file.0).unwrap();
    let add = |seed: &str| {
        zkdst(&[
            "regress",
            "add",
            "scenarios/lock.toml",
            "--seed",
            seed,
            "--note",
            "n",
            "--file",
            file.path(),
        ])
    };
    let o = add("3");
    assert_eq!(code(&o), 0, "{o:?}");
    let o = add("3");
    assert_eq!(code(&o), 3, "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("seed 3 is already a regression (entry 1)"),
        "{o:?}"
    );
    let listed = zkdst(&["regress", "list", "--file", file.path()]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("scenarios/lock.toml --seed 3  n"),
        "{listed:?}"
    );

    std::fs::write(
        &file.0,
        "[[regression]]\nscenario = \"scenarios/lock.toml\"\nseed = -1\n",
    )
    .unwrap();
    let o = zkdst(&["regress", "check", "--file", file.path()]);
    assert_eq!(code(&o), 3, "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(file.path()) && err.contains("entry 1 (`regression[0].seed`)"),
        "{err}"
    );
}
