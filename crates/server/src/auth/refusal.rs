//! A refused request: AWS's answer for it, and what the log says.

use sluice_core::{ErrorCode, SqsError};

/// A refused request: the answer the client gets, and what the log says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// AWS's error for it.
    pub error: SqsError,
    /// A short reason for the log (never a secret or a signature).
    pub reason: &'static str,
    /// The access key id the request named, when it named one.
    pub access_key_id: Option<String>,
}

impl Refusal {
    pub(super) fn new(code: ErrorCode, message: impl Into<String>, reason: &'static str) -> Self {
        Self {
            error: SqsError::new(code, message),
            reason,
            access_key_id: None,
        }
    }

    pub(super) fn by(mut self, access_key_id: &str) -> Self {
        self.access_key_id = Some(access_key_id.to_string());
        self
    }
}
