//! The queue tags a policy's `aws:ResourceTag/…` conditions read (rule
//! A6), fetched only for the policies that have such a condition.

use std::collections::BTreeMap;

use sluice_broker::{Broker, EngineError};

use super::document::Policy;

/// The tags of the queue stored under `key` when `policy` reads them,
/// else `None`; `QueueDoesNotExist` when the queue went meanwhile.
pub async fn resource_tags<B: Broker>(
    broker: &B,
    policy: &Policy,
    key: &str,
) -> Result<Option<BTreeMap<String, String>>, EngineError> {
    if !policy.reads_tags() {
        return Ok(None);
    }
    broker.get_queue(key).await.map(|meta| Some(meta.tags))
}
