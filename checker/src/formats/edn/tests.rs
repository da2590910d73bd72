use super::*;
use proptest::prelude::*;

#[test]
fn reads_a_jepsen_op() {
    let v = read_one(
        r#"{:type :invoke, :f :cas, :value [1 -2], :process 3, :time 123, :s "a\"b", :n nil, :ok true}"#,
        1,
    )
    .unwrap();
    assert_eq!(v.get("type"), Some(&Edn::Keyword("invoke".into())));
    assert_eq!(v.get("value"), Some(&Edn::Vector(vec![Edn::Int(1), Edn::Int(-2)])));
    assert_eq!(v.get("process"), Some(&Edn::Int(3)));
    assert_eq!(v.get("s"), Some(&Edn::Str("a\"b".into())));
    assert_eq!(v.get("n"), Some(&Edn::Nil));
    assert_eq!(v.get("ok"), Some(&Edn::Bool(true)));
    assert_eq!(v.get("missing"), None);
}

#[test]
fn reads_numbers_chars_and_tagged_values() {
    let all: Vec<Edn> = read_all(
        r#"1.5 -2e3 0.1M 7N 1/2 -3/4 ##Inf \a \newline \u0041 \( "\u00e9\b" #inst "2024-01-01T00:00:00Z" #uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6" #jepsen.history.Op{:index 3, :time 10}"#,
    )
    .unwrap()
    .into_iter()
    .map(|(_, v)| v)
    .collect();
    assert_eq!(all[0], Edn::Float("1.5".into()));
    assert_eq!(all[1], Edn::Float("-2e3".into()));
    assert_eq!(all[2], Edn::Float("0.1M".into()));
    assert_eq!(all[3], Edn::Int(7));
    assert_eq!(all[4], Edn::Ratio(1, 2));
    assert_eq!(all[5], Edn::Ratio(-3, 4));
    assert_eq!(all[6], Edn::Float("##Inf".into()));
    assert_eq!(
        all[7..11],
        [Edn::Char('a'), Edn::Char('\n'), Edn::Char('A'), Edn::Char('(')]
    );
    assert_eq!(all[11], Edn::Str("é\u{8}".into()));
    assert_eq!(
        all[12],
        Edn::Tagged("inst".into(), Box::new(Edn::Str("2024-01-01T00:00:00Z".into())))
    );
    assert!(matches!(&all[13], Edn::Tagged(t, _) if t == "uuid"));
    assert!(all[14].is_map());
    assert_eq!(all[14].get("index"), Some(&Edn::Int(3)));
    assert_eq!(all.len(), 15);
}

#[test]
fn discards_and_comments_are_skipped_anywhere() {
    let all = read_all("#_ {:a 1} ; c\n[1 #_2 3 #_ #_ 4 5] {:a #_ :x 1}\n#_ (:nested [#_ 9])").unwrap();
    let forms: Vec<&Edn> = all.iter().map(|f| &f.1).collect();
    assert_eq!(
        forms,
        [
            &Edn::Vector(vec![Edn::Int(1), Edn::Int(3)]),
            &Edn::Map(vec![(Edn::Keyword("a".into()), Edn::Int(1))]),
        ]
    );
    assert!(read_all("[1 #_]").is_err());
}

#[test]
fn reports_line_and_column_of_errors() {
    let e = read_all("[1 2]\n{:a 1}\n  {:a}\n").unwrap_err();
    assert_eq!((e.line, e.column), (3, 3), "{e}");
    assert!(e.expected.contains("key-value pairs"), "{e}");
    let e = read_all("[1 2\n\n").unwrap_err();
    assert_eq!((e.line, e.column), (1, 5), "{e}");
    assert!(
        e.expected.contains("']' closing the one opened at line 1, column 1"),
        "{e}"
    );
    assert_eq!(e.found, "end of input");
    let e = read_all("{:a 1\n :b 2]").unwrap_err();
    assert_eq!((e.line, e.column), (2, 6), "{e}");
    let e = read_one("  99999999999999999999", 4).unwrap_err();
    assert_eq!((e.line, e.column), (4, 3), "{e}");
    assert!(read_one("1 2", 1).is_err());
    assert!(read_one("1/0", 1).is_err());
    assert!(read_one("\\bogus", 1).is_err());
    assert!(read_one("\"\\q\"", 1).is_err());
    assert!(read_one("#", 1).is_err());
    assert!(read_one("##Foo", 1).is_err());
    assert!(read_one(&"[".repeat(10_000), 1).is_err());
    assert!(read_one(&"#_".repeat(10_000), 1).is_err());
    assert!(read_one(&"#a ".repeat(10_000), 1).is_err());
}

#[test]
fn errors_quote_a_bounded_part_of_the_text() {
    let long = format!("{{:a 1 :b {}", "x".repeat(100_000));
    let e = read_one(&long, 1).unwrap_err();
    assert!(e.to_string().chars().count() < 200, "{e}");
    let e = read_one(&format!("\"{}", "\u{1}".repeat(1000)), 1).unwrap_err();
    assert!(e.found.chars().count() <= MAX_QUOTE, "{e}");
    assert_eq!(quote("abc", 10), "\"abc\"");
    assert_eq!(quote("abcdefghijkl", 8), "\"abcde…\"");
    assert_eq!(truncate("abcdef", 4), "abc…");
}

#[test]
fn forms_know_their_lines() {
    let all = read_all("; comment\n:a\n\n[1,\n2] #{:x}").unwrap();
    assert_eq!(all.iter().map(|f| f.0).collect::<Vec<_>>(), vec![2, 4, 5]);
    assert_eq!(all[2].1, Edn::Set(vec![Edn::Keyword("x".into())]));
}

#[test]
fn a_collection_is_read_element_by_element() {
    let mut r = Reader::new(";; history\n(\n  {:a 1} ; first\n  {:a 2}\n) ; end\n");
    assert_eq!(r.enter_collection().unwrap(), Some(')'));
    let (p1, _) = r.next_in(')').unwrap().unwrap();
    let (p2, v) = r.next_in(')').unwrap().unwrap();
    assert_eq!((p1, p2), (Pos { line: 3, column: 3 }, Pos { line: 4, column: 3 }));
    assert_eq!(v.get("a"), Some(&Edn::Int(2)));
    assert!(r.next_in(')').unwrap().is_none());
    assert!(r.at_end().unwrap());
}

#[test]
fn reading_is_linear() {
    // 200k forms: a quadratic reader would take minutes.
    let text = "{:type :invoke, :f :read, :value nil, :process 1}\n".repeat(200_000);
    assert_eq!(read_all(&text).unwrap().len(), 200_000);
}

proptest! {
    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = read_all(&text) {
            prop_assert!(e.line >= 1 && e.column >= 1);
            prop_assert!(e.to_string().chars().count() <= 200, "{}", e);
        }
    }

    #[test]
    fn printed_values_read_back(v in edn_value()) {
        prop_assert_eq!(read_one(&v.to_string(), 1).unwrap(), v);
    }
}

fn edn_value() -> impl Strategy<Value = Edn> {
    let leaf = prop_oneof![
        Just(Edn::Nil),
        any::<bool>().prop_map(Edn::Bool),
        any::<i64>().prop_map(Edn::Int),
        "-?[0-9]{1,5}\\.[0-9]{1,3}(e-?[0-9])?M?".prop_map(Edn::Float),
        (any::<i32>(), 1i64..1000).prop_map(|(n, d)| Edn::Ratio(n as i64, d)),
        any::<char>().prop_map(Edn::Char),
        "[a-z \"\\\\\n\t\u{1}é]{0,8}".prop_map(Edn::Str),
        "[a-z][a-z0-9-]{0,6}".prop_map(Edn::Keyword),
        "[a-z][a-z0-9.-]{0,6}"
            .prop_filter("not a literal", |s| !matches!(s.as_str(), "nil" | "true" | "false"))
            .prop_map(Edn::Symbol),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Edn::Vector),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Edn::List),
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Edn::Set),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..3).prop_map(Edn::Map),
            ("[a-z][a-z.]{0,5}", inner).prop_map(|(t, v)| Edn::Tagged(t, Box::new(v))),
        ]
    })
}
