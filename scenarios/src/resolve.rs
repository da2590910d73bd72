//! A scenario file resolved against the registry: the checkers its recipe
//! promises when the file names none, and a planted variant that belongs
//! to its recipe and consumer. Above both the scenario's types (which the
//! registry's workloads read) and the registry.

use std::path::Path;

use crate::scenario::{names_checkers, Client, Scenario, ScenarioError, ALWAYS_CHECKED, WIRE_CHECKED};

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Scenario::parse(&text, &file)
    }

    /// Parses and validates scenario text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
        let mut s = Scenario::decode(text, file)?;
        if !names_checkers(text) {
            // The checkers that judge what the recipe promises.
            let promised = crate::registry::entry(s.workload.recipe).checkers;
            s.check.checkers = promised.iter().map(|c| c.to_string()).collect();
        }
        s.validate(file)?;
        s.validate_variant(file)?;
        // Through a client library, the servers' record of its connections
        // is the evidence on which the library is judged.
        let wire = (s.client() == Client::Wire).then_some(WIRE_CHECKED);
        for c in ALWAYS_CHECKED.into_iter().chain(wire) {
            if !s.check.checkers.iter().any(|x| x == c) {
                s.check.checkers.push(c.to_string());
            }
        }
        Ok(s)
    }

    /// A planted variant runs in place of its own recipe (and consumer).
    fn validate_variant(&self, file: &str) -> Result<(), ScenarioError> {
        let w = &self.workload;
        let Some(v) = w.variant else { return Ok(()) };
        let bad = |field: &str, message: String| ScenarioError::Field {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        if v.recipe() != w.recipe {
            return Err(bad(
                "workload.variant",
                format!(
                    "{} is a planted {} recipe; expected recipe = {:?}, found {:?}",
                    v.name(),
                    v.recipe(),
                    v.recipe().name(),
                    w.recipe.name()
                ),
            ));
        }
        if let Some(c) = v.consumer().filter(|c| *c != w.consumer) {
            return Err(bad(
                "workload.consumer",
                format!("{} replaces the {c:?} consumer; expected consumer = {c:?}", v.name()),
            ));
        }
        Ok(())
    }
}
