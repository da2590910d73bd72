//! Paths an application may build from outside names: dots, empty and
//! relative components, trailing slashes, NUL, control, reserved and
//! non-BMP characters, mixed with ordinary ones. The client must refuse
//! exactly what ZooKeeper's `PathUtils.validatePath` refuses, before
//! sending (the consistency checker's `path-validation`); what it lets
//! through the servers must apply as ZooKeeper would.

use rand::seq::SliceRandom;
use rand::Rng;

/// One character from each side of every edge of the rules.
const CHARS: &[char] = &[
    'a',
    'b',
    '.',
    '/',
    '\0',
    '\u{1}',
    '\u{1f}',
    ' ',
    '~',
    '\u{7f}',
    '\u{80}',
    '\u{9f}',
    '\u{a0}',
    'é',
    '\u{7ff}',
    '\u{800}',
    '\u{d7ff}',
    '\u{e000}',
    '\u{f8ff}',
    '\u{f900}',
    '\u{ffef}',
    '\u{fff0}',
    '\u{ffff}',
    '\u{10000}',
    '😀',
];

/// Whole components that sit on the rules' edges.
const COMPONENTS: &[&str] = &["", ".", "..", "...", ".a", "a.", "..a", "a..", "a.b", "a"];

pub fn odd_path(rng: &mut impl Rng) -> String {
    match rng.gen_range(0..20) {
        0 => String::new(),
        1 => "a/b".into(),
        2 => "/".into(),
        _ => {
            let mut p = String::new();
            for _ in 0..rng.gen_range(1..=3) {
                p.push('/');
                if rng.gen_bool(0.4) {
                    p.push_str(COMPONENTS.choose(rng).copied().unwrap_or("a"));
                } else {
                    for _ in 0..rng.gen_range(1..=3) {
                        p.push(*CHARS.choose(rng).unwrap_or(&'a'));
                    }
                }
            }
            if rng.gen_bool(0.1) {
                p.push('/');
            }
            p
        }
    }
}
