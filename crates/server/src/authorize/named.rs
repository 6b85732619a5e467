//! What a request names that the access check must look at, whatever its
//! API: each API's requests say it by an exhaustive match over their
//! operations (`crate::api::*::named`), borrowing from the typed input.

/// The members of a request that name queues, consumers or alarms.
#[derive(Debug, Default)]
pub struct Named<'a> {
    /// A queue by its URL (`QueueUrl`).
    pub queue_url: Option<&'a str>,
    /// A second queue by its URL: where a restore sends messages.
    pub destination_url: Option<&'a str>,
    /// A queue by its name, with the account that owns it when given
    /// (CreateQueue, GetQueueUrl).
    pub queue_name: Option<(&'a str, Option<&'a str>)>,
    /// Queues by their ARN (a move task's source and destination, a
    /// redrive's destination).
    pub arns: Vec<&'a str>,
    /// A move task's handle, which names its source.
    pub task_handle: Option<&'a str>,
    /// A RedrivePolicy the request sets, which names a dead-letter queue.
    pub redrive_policy: Option<&'a str>,
    /// A push consumer by its name.
    pub consumer: Option<&'a str>,
    /// Alarms by their names.
    pub alarm_names: &'a [String],
    /// An alarm's actions (webhook URLs and queue ARNs).
    pub alarm_actions: &'a [String],
}
