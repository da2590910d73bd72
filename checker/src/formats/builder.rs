//! Builds a [`History`] from Jepsen-style events, where a process has at
//! most one operation outstanding and a completion names only its process.

use std::collections::HashMap;

use super::edn::{truncate, Edn};
use super::FormatError;
use crate::history::{ClientId, Event, History, Op, OpId, Outcome, Time};

/// The most of the offending text an error quotes.
pub(crate) const MAX_FOUND: usize = 80;

pub(crate) struct Builder<'a> {
    file: &'a str,
    history: History,
    pending: HashMap<ClientId, (OpId, Op)>,
    next_id: OpId,
}

/// What kind of event a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Invoke,
    Ok,
    Fail,
    Info,
}

impl EventType {
    pub(crate) fn from_keyword(k: &str) -> Option<EventType> {
        match k {
            "invoke" => Some(EventType::Invoke),
            "ok" => Some(EventType::Ok),
            "fail" => Some(EventType::Fail),
            "info" => Some(EventType::Info),
            _ => None,
        }
    }
}

impl<'a> Builder<'a> {
    pub(crate) fn new(file: &'a str) -> Self {
        Builder {
            file,
            history: History::new(),
            pending: HashMap::new(),
            next_id: 0,
        }
    }

    /// An error at `line`, quoting at most [`MAX_FOUND`] characters of
    /// what was found.
    pub(crate) fn error(&self, line: usize, expected: impl Into<String>, found: impl Into<String>) -> FormatError {
        FormatError::Malformed {
            file: self.file.to_string(),
            line,
            column: None,
            expected: expected.into(),
            found: truncate(&found.into(), MAX_FOUND),
        }
    }

    /// An error at `line` and `column`, as [`Builder::error`].
    pub(crate) fn error_at(
        &self,
        line: usize,
        column: usize,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> FormatError {
        match self.error(line, expected, found) {
            FormatError::Malformed {
                file,
                line,
                expected,
                found,
                ..
            } => FormatError::Malformed {
                file,
                line,
                column: Some(column),
                expected,
                found,
            },
            other => other,
        }
    }

    pub(crate) fn invoke(&mut self, line: usize, client: ClientId, time: Time, op: Op) -> Result<(), FormatError> {
        if self.pending.contains_key(&client) {
            return Err(self.error(
                line,
                format!("process {client} to complete its operation before invoking another"),
                "a second :invoke",
            ));
        }
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(client, (id, op.clone()));
        self.history.events.push(Event::Invoke {
            id,
            time,
            client,
            session: None,
            op,
            background: false,
        });
        Ok(())
    }

    /// The operation `client` has outstanding.
    pub(crate) fn pending(&self, line: usize, client: ClientId) -> Result<&Op, FormatError> {
        self.pending.get(&client).map(|(_, op)| op).ok_or_else(|| {
            self.error(
                line,
                format!("an :invoke by process {client} before its completion"),
                "a completion",
            )
        })
    }

    pub(crate) fn complete(
        &mut self,
        line: usize,
        client: ClientId,
        time: Time,
        outcome: Outcome,
    ) -> Result<(), FormatError> {
        let (id, _) = self.pending.remove(&client).ok_or_else(|| {
            self.error(
                line,
                format!("an :invoke by process {client} before its completion"),
                "a completion",
            )
        })?;
        self.history.events.push(Event::Complete {
            id,
            time,
            client,
            outcome,
            zxid: None,
        });
        Ok(())
    }

    pub(crate) fn finish(self) -> History {
        self.history
    }
}

/// A process id: a non-negative integer that fits a client id.
pub(crate) fn process(v: &Edn) -> Option<ClientId> {
    match v {
        Edn::Int(i) => ClientId::try_from(*i).ok(),
        _ => None,
    }
}

/// A key as a string: integers, strings, keywords.
pub(crate) fn key_string(v: &Edn) -> Option<String> {
    match v {
        Edn::Int(i) => Some(i.to_string()),
        Edn::Str(s) | Edn::Keyword(s) => Some(s.clone()),
        _ => None,
    }
}
