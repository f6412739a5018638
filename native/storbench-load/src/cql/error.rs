//! A failed CQL operation, counted by its kind, and the one-line form of the messages it carries: what
//! the multiplexed request path (`mux`) and the one-at-a-time worker (`worker`) both return.

use crate::core::OpFailure;
use std::borrow::Cow;
use std::fmt;

/// One failed operation, counted by `kind`.
#[derive(Debug)]
pub enum OpError {
    /// The session could not be set up (the message of the first failure).
    Connect(String),
    /// A READ or SCAN found no row for its key.
    NotFound(String),
    Execution {
        what: &'static str,
        kind: String,
        message: String,
    },
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::Connect(m) => write!(f, "connect: {m}"),
            OpError::NotFound(key) => write!(f, "no row for key {key}"),
            OpError::Execution { what, message, .. } => write!(f, "{what}: {message}"),
        }
    }
}

impl std::error::Error for OpError {}

impl OpFailure for OpError {
    fn kind(&self) -> Cow<'_, str> {
        match self {
            OpError::Connect(_) => "connect".into(),
            OpError::NotFound(_) => "not_found".into(),
            OpError::Execution { kind, .. } => Cow::Borrowed(kind),
        }
    }
}

pub(super) fn one_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}
