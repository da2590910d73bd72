//! The library entry point the command line calls: read a history, pick a
//! model, run the linearizability engine, and explain the verdict.

use std::path::Path;

use crate::formats::{Format, FormatError};
use crate::history::History;
use crate::linearizability::{check_partitions, Budget, Verdict};
use crate::models::{self, Counter, Kv, Model, ModelError, ModelName, Mutex, Queue, Register, Set};

/// A verdict with the facts behind it and a plain-text explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub verdict: Verdict,
    pub model: ModelName,
    /// Operations checked (failed ones excluded) and partitions.
    pub operations: usize,
    pub partitions: usize,
    /// First line exactly `linearizable`, `NOT linearizable` or `unknown`.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("cannot tell which model the history is about; name one (register, cas-register, multi-register, kv, queue, set, counter, mutex)")]
    NoModel,
}

/// Reads `path` in `format` and checks it against `model` (or the model the
/// format implies, or the one its operations suggest).
pub fn check_file(path: &Path, format: Format, model: Option<ModelName>, budget: Budget) -> Result<Report, CheckError> {
    let history = format.read(path)?;
    let model = model.or(match format {
        Format::JepsenEtcd => Some(ModelName::CasRegister),
        Format::PorcupineKv => Some(ModelName::Kv),
        Format::Edn | Format::Zkdst => None,
    });
    check_history(&history, model, budget)
}

/// Checks a history against a model.
pub fn check_history(history: &History, model: Option<ModelName>, budget: Budget) -> Result<Report, CheckError> {
    let name = model.or_else(|| ModelName::infer(history)).ok_or(CheckError::NoModel)?;
    match name {
        ModelName::Register => run(&Register::plain(), name, history, budget),
        ModelName::CasRegister | ModelName::MultiRegister => run(&Register::cas(), name, history, budget),
        ModelName::Kv => run(&Kv, name, history, budget),
        ModelName::Queue => run(&Queue, name, history, budget),
        ModelName::Set => run(&Set, name, history, budget),
        ModelName::Counter => run(&Counter, name, history, budget),
        ModelName::Mutex => run(&Mutex, name, history, budget),
    }
}

fn run<M: Model>(model: &M, name: ModelName, history: &History, budget: Budget) -> Result<Report, CheckError> {
    let parts = models::partitions(model, history)?;
    let operations = parts.iter().map(|p| p.ops.len()).sum();
    let verdict = check_partitions(model, &parts, budget);
    let summary = format!(
        "model {name}: {operations} operations in {} independent object(s)",
        parts.len()
    );
    let text = match &verdict {
        Verdict::Linearizable => format!("linearizable\n{summary}\n"),
        Verdict::NotLinearizable(w) => format!("NOT linearizable\n{summary}\n{w}"),
        Verdict::Unknown(reason) => format!("unknown\n{summary}\n{reason}\n"),
    };
    Ok(Report {
        verdict,
        model: name,
        operations,
        partitions: parts.len(),
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains_a_refutation() {
        let text = "INFO  jepsen.util - 0 :invoke :write 1\nINFO  jepsen.util - 0 :ok :write 1\nINFO  jepsen.util - 1 :invoke :read nil\nINFO  jepsen.util - 1 :ok :read 2\n";
        let h = Format::JepsenEtcd.parse(text, "t.log").unwrap();
        let r = check_history(&h, None, Budget::unlimited()).unwrap();
        assert_eq!(r.model, ModelName::CasRegister);
        assert!(r.text.starts_with("NOT linearizable\n"), "{}", r.text);
        assert!(r.text.contains("read -> 2"), "{}", r.text);
        let Verdict::NotLinearizable(w) = &r.verdict else {
            panic!("{:?}", r.verdict)
        };
        assert_eq!(w.prefix.len(), 1);
        assert_eq!(w.state, "1");
        assert_eq!(w.overdue.as_ref().map(|o| o.id), Some(1));
    }

    #[test]
    fn accepts_and_gives_up_within_budget() {
        let text = "INFO  jepsen.util - 0 :invoke :write 1\nINFO  jepsen.util - 1 :invoke :read nil\nINFO  jepsen.util - 0 :ok :write 1\nINFO  jepsen.util - 1 :ok :read 1\n";
        let h = Format::JepsenEtcd.parse(text, "t.log").unwrap();
        let r = check_history(&h, None, Budget::unlimited()).unwrap();
        assert!(r.text.starts_with("linearizable\n"), "{}", r.text);
        let r = check_history(
            &h,
            None,
            Budget {
                deadline: None,
                max_steps: Some(1),
                threads: None,
            },
        )
        .unwrap();
        assert!(r.text.starts_with("unknown\n"), "{}", r.text);
    }

    #[test]
    fn edn_without_a_model_is_an_error() {
        assert_eq!(
            check_history(&History::new(), None, Budget::unlimited()),
            Err(CheckError::NoModel)
        );
    }
}
