//! Differential tests of the engine: small histories generated from a
//! sequential specification are linearizable; mutated ones (a read value
//! flipped, a write dropped, a response moved earlier, a lock granted twice)
//! are judged exactly as a brute-force checker judges them. The brute force
//! tries every order consistent with real time, and may leave out any
//! operation whose outcome is unknown.

use proptest::prelude::*;

use zkdst_checker::linearizability::{check_operations, Budget, LinOp, Verdict};
use zkdst_checker::models::{
    Kv, KvInput, KvOutput, Model, Mutex, MutexInput, MutexOutput, Queue, QueueInput, QueueOutput, Register,
    RegisterInput, RegisterOutput,
};

type Ops<M> = Vec<LinOp<<M as Model>::Input, <M as Model>::Output>>;

fn determinate<I, O>(op: &LinOp<I, O>) -> Option<u64> {
    op.ret.filter(|_| op.output.is_some())
}

fn brute_force<M: Model>(model: &M, ops: &Ops<M>) -> bool {
    fn go<M: Model>(model: &M, ops: &Ops<M>, done: u32, state: &M::State) -> bool {
        let placed = |i: usize| done & (1 << i) != 0;
        if (0..ops.len()).all(|i| placed(i) || determinate(&ops[i]).is_none()) {
            return true;
        }
        (0..ops.len()).filter(|&i| !placed(i)).any(|i| {
            let forced_before =
                (0..ops.len()).any(|j| j != i && !placed(j) && determinate(&ops[j]).is_some_and(|r| r < ops[i].call));
            !forced_before
                && model
                    .step(state, &ops[i].input, ops[i].output.as_ref())
                    .is_some_and(|next| go(model, ops, done | (1 << i), &next))
        })
    }
    go(model, ops, 0, &model.init())
}

/// The kv store as a plain specification: the state is the text itself
/// (the engine's [`Kv`] keeps a hash beside it), so the brute force over
/// it checks `Kv`'s state too.
struct KvSpec;

impl Model for KvSpec {
    type State = String;
    type Input = KvInput;
    type Output = KvOutput;

    fn name(&self) -> &'static str {
        "kv-spec"
    }

    fn init(&self) -> String {
        String::new()
    }

    fn step(&self, state: &String, input: &KvInput, output: Option<&KvOutput>) -> Option<String> {
        match (input, output) {
            (KvInput::Get { .. }, Some(KvOutput::Got(v))) => (v == state).then(|| state.clone()),
            (KvInput::Get { .. }, None) => Some(state.clone()),
            (KvInput::Get { .. }, Some(KvOutput::Done)) => None,
            (KvInput::Put { value, .. }, _) => Some(value.clone()),
            (KvInput::Append { value, .. }, _) => Some(format!("{state}{value}")),
        }
    }

    fn input(&self, op: &zkdst_checker::history::Operation) -> Result<KvInput, &'static str> {
        Kv.input(op)
    }

    fn output(&self, input: &KvInput, value: &zkdst_checker::history::Value) -> Result<KvOutput, &'static str> {
        Kv.output(input, value)
    }
}

fn engine<M: Model>(model: &M, ops: &Ops<M>) -> bool {
    match check_operations(model, ops, Budget::unlimited()) {
        Verdict::Linearizable => true,
        Verdict::NotLinearizable(w) => {
            assert!(
                w.prefix.len() < ops.len(),
                "a refutation's prefix cannot hold every operation"
            );
            false
        }
        Verdict::Unknown(r) => panic!("unlimited budget gave up: {r}"),
    }
}

/// One generated step: which operation, an argument, the client, how far
/// the call and return are from the linearization point, and whether the
/// outcome is lost.
#[derive(Debug, Clone)]
struct Step {
    kind: u8,
    arg: i64,
    client: u32,
    before: u64,
    after: u64,
    lost: bool,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = (0u8..3, 0i64..3, 0u32..3, 0u64..25, 0u64..25, prop::bool::weighted(0.15)).prop_map(
        |(kind, arg, client, before, after, lost)| Step {
            kind,
            arg,
            client,
            before,
            after,
            lost,
        },
    );
    proptest::collection::vec(step, 1..=8)
}

fn op<I, O>(k: usize, s: &Step, input: I, output: O) -> LinOp<I, O> {
    let point = 30 + 10 * k as u64;
    LinOp {
        id: k as u64,
        client: s.client,
        call: point - s.before,
        ret: (!s.lost).then_some(point + s.after),
        input,
        output: (!s.lost).then_some(output),
    }
}

// --- sequential specifications, written independently of the models ---

fn register_history(steps: &[Step]) -> Ops<Register> {
    let mut value: Option<i64> = None;
    steps
        .iter()
        .enumerate()
        .map(|(k, s)| match s.kind {
            0 => op(k, s, RegisterInput::Read { key: None }, RegisterOutput::Read(value)),
            1 => {
                value = Some(s.arg);
                op(
                    k,
                    s,
                    RegisterInput::Write {
                        key: None,
                        value: s.arg,
                    },
                    RegisterOutput::Done,
                )
            }
            _ => {
                let hit = value == Some(s.arg);
                if hit {
                    value = Some(s.arg + 1);
                }
                op(
                    k,
                    s,
                    RegisterInput::Cas {
                        key: None,
                        expected: s.arg,
                        new: s.arg + 1,
                    },
                    if hit {
                        RegisterOutput::Done
                    } else {
                        RegisterOutput::CasFailed
                    },
                )
            }
        })
        .collect()
}

/// One key: gets (reads, linearized as soon as they can be), and puts and
/// appends of a few values (so lost ones with equal inputs are
/// interchangeable).
fn kv_history(steps: &[Step]) -> Ops<Kv> {
    let mut value = String::new();
    let key = || "k".to_string();
    steps
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let v = format!("v{}", s.arg);
            match s.kind {
                0 => op(k, s, KvInput::Get { key: key() }, KvOutput::Got(value.clone())),
                1 => {
                    value = v.clone();
                    op(k, s, KvInput::Put { key: key(), value: v }, KvOutput::Done)
                }
                _ => {
                    value.push_str(&v);
                    op(k, s, KvInput::Append { key: key(), value: v }, KvOutput::Done)
                }
            }
        })
        .collect()
}

fn queue_history(steps: &[Step]) -> Ops<Queue> {
    let mut items = std::collections::VecDeque::new();
    steps
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let q = "q".to_string();
            if s.kind == 0 {
                op(
                    k,
                    s,
                    QueueInput::Dequeue { queue: q },
                    QueueOutput::Dequeued(items.pop_front()),
                )
            } else {
                let item = format!("i{k}");
                items.push_back(item.clone());
                op(k, s, QueueInput::Enqueue { queue: q, item }, QueueOutput::Enqueued)
            }
        })
        .collect()
}

fn mutex_history(steps: &[Step]) -> Ops<Mutex> {
    let mut owner: Option<u32> = None;
    let mut token = 0;
    let mut out = Vec::new();
    for (k, s) in steps.iter().enumerate() {
        let lock = "l".to_string();
        match owner {
            None => {
                token += 1 + s.arg;
                owner = Some(s.client);
                out.push(op(
                    k,
                    s,
                    MutexInput::Acquire { lock, client: s.client },
                    MutexOutput::Acquired(Some(token)),
                ));
            }
            Some(c) => {
                owner = None;
                let s = Step { client: c, ..s.clone() };
                out.push(op(
                    k,
                    &s,
                    MutexInput::Release { lock, client: c },
                    MutexOutput::Released,
                ));
            }
        }
    }
    out
}

// --- mutations ---

#[path = "differential/mutate.rs"]
mod mutate;
use mutate::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn register_histories_from_the_spec_are_linearizable(s in steps()) {
        let ops = register_history(&s);
        prop_assert!(engine(&Register::cas(), &ops));
        prop_assert!(brute_force(&Register::cas(), &ops));
    }

    #[test]
    fn register_mutations_judged_as_brute_force(s in steps(), m in any::<u8>(), at in any::<usize>()) {
        let mut ops = register_history(&s);
        mutate_register(&mut ops, m, at);
        prop_assert_eq!(engine(&Register::cas(), &ops), brute_force(&Register::cas(), &ops), "{:?}", ops);
    }

    #[test]
    fn kv_histories_from_the_spec_are_linearizable(s in steps()) {
        let ops = kv_history(&s);
        prop_assert!(engine(&Kv, &ops));
        prop_assert!(brute_force(&Kv, &ops));
    }

    #[test]
    fn kv_mutations_judged_as_brute_force(s in steps(), m in any::<u8>(), at in any::<usize>()) {
        let mut ops = kv_history(&s);
        mutate_kv(&mut ops, m, at);
        let verdict = engine(&Kv, &ops);
        prop_assert_eq!(verdict, brute_force(&Kv, &ops), "{:?}", ops);
        prop_assert_eq!(verdict, brute_force(&KvSpec, &ops), "{:?}", ops);
    }

    #[test]
    fn queue_histories_from_the_spec_are_linearizable(s in steps()) {
        let ops = queue_history(&s);
        prop_assert!(engine(&Queue, &ops));
        prop_assert!(brute_force(&Queue, &ops));
    }

    #[test]
    fn queue_mutations_judged_as_brute_force(s in steps(), m in any::<u8>(), at in any::<usize>()) {
        let mut ops = queue_history(&s);
        mutate_queue(&mut ops, m, at);
        prop_assert_eq!(engine(&Queue, &ops), brute_force(&Queue, &ops), "{:?}", ops);
    }

    #[test]
    fn mutex_histories_from_the_spec_are_linearizable(s in steps()) {
        let ops = mutex_history(&s);
        prop_assert!(engine(&Mutex, &ops));
        prop_assert!(brute_force(&Mutex, &ops));
    }

    #[test]
    fn mutex_mutations_judged_as_brute_force(s in steps(), m in any::<u8>(), at in any::<usize>()) {
        let mut ops = mutex_history(&s);
        mutate_mutex(&mut ops, m, at);
        prop_assert_eq!(engine(&Mutex, &ops), brute_force(&Mutex, &ops), "{:?}", ops);
    }
}

/// The mutations do refute: a double grant with no overlap is caught.
#[test]
fn a_lock_granted_twice_is_refuted() {
    let s = |client, lost| Step {
        kind: 0,
        arg: 0,
        client,
        before: 0,
        after: 0,
        lost,
    };
    let ops: Ops<Mutex> = vec![
        op(
            0,
            &s(1, false),
            MutexInput::Acquire {
                lock: "l".into(),
                client: 1,
            },
            MutexOutput::Acquired(Some(1)),
        ),
        op(
            1,
            &s(2, false),
            MutexInput::Acquire {
                lock: "l".into(),
                client: 2,
            },
            MutexOutput::Acquired(Some(2)),
        ),
    ];
    assert!(!engine(&Mutex, &ops));
    assert!(!brute_force(&Mutex, &ops));
}

/// The differential tests are not vacuous: a good share of the mutated
/// histories are refuted (and by both checkers).
#[test]
fn mutations_often_refute() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (steps(), any::<u8>(), any::<usize>());
    let (mut refuted, mut total) = ([0usize; 4], 0usize);
    for _ in 0..300 {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        let (s, m, at) = tree.current();
        total += 1;
        let mut r = register_history(&s);
        mutate_register(&mut r, m, at);
        let mut q = queue_history(&s);
        mutate_queue(&mut q, m, at);
        let mut x = mutex_history(&s);
        mutate_mutex(&mut x, m, at);
        let mut kv = kv_history(&s);
        mutate_kv(&mut kv, m, at);
        for (k, (e, b)) in [
            (engine(&Register::cas(), &r), brute_force(&Register::cas(), &r)),
            (engine(&Queue, &q), brute_force(&Queue, &q)),
            (engine(&Mutex, &x), brute_force(&Mutex, &x)),
            (engine(&Kv, &kv), brute_force(&Kv, &kv)),
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(e, b);
            refuted[k] += usize::from(!e);
        }
    }
    for (k, name) in ["register", "queue", "mutex", "kv"].iter().enumerate() {
        assert!(
            refuted[k] * 10 >= total,
            "{name}: only {} of {total} mutated histories refuted",
            refuted[k]
        );
    }
    eprintln!("refuted of {total}: {refuted:?}");
}

/// With one thread the witness of a refuted kv history (where the pruning
/// of unsatisfiable reads is at work) is the same on every run, and the
/// verdict is the one the default, multi-threaded budget gives.
#[test]
fn kv_witnesses_are_deterministic_on_one_thread() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let one = Budget {
        threads: Some(1),
        ..Budget::unlimited()
    };
    let mut refuted = 0;
    for k in 0..200 {
        let s = steps().new_tree(&mut runner).unwrap().current();
        let mut ops = kv_history(&s);
        mutate_kv(&mut ops, k as u8, k);
        let first = check_operations(&Kv, &ops, one);
        assert_eq!(first, check_operations(&Kv, &ops, one));
        assert_eq!(
            first.is_refuted(),
            !matches!(check_operations(&Kv, &ops, Budget::unlimited()), Verdict::Linearizable)
        );
        refuted += usize::from(first.is_refuted());
    }
    assert!(refuted > 0);
}
