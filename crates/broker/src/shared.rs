//! What several nodes sharing one storage keep in it besides queues: the
//! alarms (so every node shows the same ones and one node evaluates them),
//! the rule that a source queue has one active move task at a time, and
//! the secret receipt handles are sealed with.

use sluice_core::clock::Millis;
use sluice_core::{ErrorCode, SqsError};

/// An alarm as shared storage keeps it. The engine does not read the
/// definition or the history: the server writes and reads them as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAlarm {
    /// Unique name.
    pub name: String,
    /// Where it was defined (`api`, `config`, `dlq_alarms`).
    pub source: String,
    /// The definition, JSON.
    pub definition: String,
    /// `OK`, `ALARM` or `INSUFFICIENT_DATA`.
    pub state: String,
    /// Why it is in that state.
    pub reason: String,
    /// When the state last changed (or the alarm was created).
    pub updated_at: Millis,
    /// State changes, newest first, JSON.
    pub history: String,
}

/// The secret receipt handles are sealed with (rule A3). Its Debug print
/// hides the bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct HandleSecret(pub [u8; 32]);

impl HandleSecret {
    /// A new secret from the operating system's random source.
    pub fn random() -> Result<Self, SqsError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| SqsError::internal(format!("no random source: {e}")))?;
        Ok(Self(bytes))
    }

    /// The secret read back from storage; `None` unless it is 32 bytes.
    pub fn from_slice(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }
}

impl std::fmt::Debug for HandleSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HandleSecret(…)")
    }
}

/// The error of a second active move task on one source queue (rule R7),
/// the same from every engine: AWS answers it as an invalid parameter.
pub fn move_task_already_running() -> SqsError {
    SqsError::new(
        ErrorCode::InvalidParameterValue,
        "There is already a task running. Only one active task is allowed for a source queue arn at a given time.",
    )
}

/// The error of an alarm operation on an engine that keeps no alarms.
pub fn alarms_not_shared() -> SqsError {
    SqsError::internal("This storage engine keeps no alarms; the server keeps them itself.")
}
