//! `dlq peek` and `dlq show`: read messages without receiving them
//! (PeekMessages, rule X1), with their provenance (rule X2).

use std::collections::BTreeMap;

use serde::Serialize;

use super::args::{PeekArgs, ShowArgs};
use super::filter::MessageFilter;
use crate::admin::{out, outln, print_json};
use crate::inventory::name_of;
use crate::table::{Table, duration, or_null, shorten, unsigned};
use crate::timefmt::{now_ms, rfc3339};
use sluice_client::Client;
use sluice_client::sluice::{PeekMessagesRequest, PeekedMessage};
use sluice_client::sqs::MessageAttributeValue;

/// The largest PeekMessages page.
const MAX_PAGE: usize = 100;

/// The message attribute a selective redrive counts replays in (rule X3).
pub const REPLAY_COUNT: &str = "sluice.replay-count";

/// One page of PeekMessages: the messages and the next page's token.
pub async fn peek_page(
    client: &Client,
    url: &str,
    filter: &MessageFilter,
    size: usize,
    token: Option<&str>,
) -> anyhow::Result<(Vec<PeekedMessage>, Option<String>)> {
    let input = PeekMessagesRequest {
        max_results: Some(size.clamp(1, MAX_PAGE) as i64),
        next_token: token.map(str::to_string),
        ..filter.peek(url)
    };
    let out = client.call(&input).await?;
    Ok((out.messages, out.next_token))
}

/// Up to `limit` matching messages (all of them when `None`), page after page.
pub async fn peek_messages(
    client: &Client,
    url: &str,
    filter: &MessageFilter,
    limit: Option<usize>,
) -> anyhow::Result<Vec<PeekedMessage>> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let want = limit.map_or(MAX_PAGE, |l| (l - out.len()).min(MAX_PAGE));
        let (page, next) = peek_page(client, url, filter, want, token.as_deref()).await?;
        out.extend(page);
        if let Some(l) = limit
            && out.len() >= l
        {
            out.truncate(l);
            return Ok(out);
        }
        match next {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

/// How many times a message was replayed by a selective redrive.
pub fn replay_count(message: &PeekedMessage) -> u64 {
    replay_count_of(&message.message_attributes)
}

/// The `sluice.replay-count` of a message's attributes; 0 without one.
fn replay_count_of(message_attributes: &BTreeMap<String, MessageAttributeValue>) -> u64 {
    message_attributes
        .get(REPLAY_COUNT)
        .and_then(|a| a.string_value.as_deref())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// `dlq peek --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Peeked<'a> {
    queue_url: &'a str,
    messages: &'a [PeekedMessage],
}

/// `dlq show --json`.
#[derive(Serialize)]
#[serde(rename_all = "PascalCase")]
struct Shown<'a> {
    queue_url: &'a str,
    message: &'a PeekedMessage,
    provenance: &'a Provenance,
}

/// `dlq peek`.
pub async fn peek(client: &Client, args: PeekArgs) -> anyhow::Result<u8> {
    let url = client.queue_url(&args.queue).await?;
    let filter = args.filter.to_input(client).await?;
    let limit = (!args.all).then_some(args.limit as usize);
    let messages = peek_messages(client, &url, &filter, limit).await?;
    if args.json {
        print_json(&Peeked {
            queue_url: &url,
            messages: &messages,
        });
        return Ok(0);
    }
    if messages.is_empty() {
        outln!("no matching messages in {}", name_of(&url));
        return Ok(0);
    }
    let now = now_ms();
    // FIFO (and fair) queues: show the group, which decides the order.
    let grouped = messages.iter().any(|m| m.message_group_id.is_some());
    let mut columns = vec![
        "MESSAGE ID",
        "AGE>",
        "STATE",
        "RECEIVES>",
        "REPLAYS>",
        "SOURCE",
        "FAILURE REASON",
        "BODY",
    ];
    // Failure classes (rule X7) get a column once any message has one.
    let classified = messages.iter().any(|m| m.failure_class.is_some());
    if classified {
        columns.insert(columns.len() - 2, "CLASS");
    }
    if grouped {
        columns.insert(3, "GROUP");
    }
    let mut table = Table::new(&columns);
    for m in &messages {
        let sent = unsigned(m.sent_timestamp).unwrap_or(0);
        let mut row = vec![
            m.message_id.clone().unwrap_or_default(),
            duration(now.saturating_sub(sent) / 1000),
            m.state.clone().unwrap_or_default(),
            or_null(m.receive_count),
            replay_count(m).to_string(),
            m.attributes
                .get("DeadLetterQueueSourceArn")
                .map(|a| name_of(a).to_string())
                .unwrap_or_else(|| "-".into()),
            shorten(m.failure_reason.as_deref().unwrap_or("-"), 40),
            shorten(m.body.as_deref().unwrap_or(""), 50),
        ];
        if classified {
            let class = m.failure_class.as_deref().unwrap_or("-");
            row.insert(row.len() - 2, class.to_string());
        }
        if grouped {
            row.insert(3, shorten(m.message_group_id.as_deref().unwrap_or("-"), 20));
        }
        table.row(row);
    }
    out!("{}", table.render());
    if limit.is_some_and(|l| messages.len() >= l) {
        outln!(
            "(first {} shown: --limit N for more, --all for every one)",
            messages.len()
        );
    }
    Ok(0)
}

/// `dlq show`: finds the message by id (PeekMessages has no id filter, so
/// this pages through the queue).
pub async fn show(client: &Client, args: ShowArgs) -> anyhow::Result<u8> {
    let url = client.queue_url(&args.queue).await?;
    let mut token: Option<String> = None;
    let message = loop {
        let (page, next) = peek_page(
            client,
            &url,
            &MessageFilter::default(),
            MAX_PAGE,
            token.as_deref(),
        )
        .await?;
        if let Some(m) = page
            .into_iter()
            .find(|m| m.message_id.as_deref() == Some(args.message_id.as_str()))
        {
            break m;
        }
        match next {
            Some(t) => token = Some(t),
            None => anyhow::bail!(
                "MessageNotFound: no message {} in {} (already redriven, deleted or expired?)",
                args.message_id,
                name_of(&url)
            ),
        }
    };
    let provenance = provenance_of(&message);
    if args.json {
        print_json(&Shown {
            queue_url: &url,
            message: &message,
            provenance: &provenance,
        });
        return Ok(0);
    }
    out!("{}", render_message(&message, &provenance));
    Ok(0)
}

/// Where a dead-lettered message came from and what happened to it (X2):
/// all of `dlq show`'s provenance, and the first part of `dlq archive
/// show`'s.
#[derive(Debug, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(crate) struct Provenance {
    /// The queue it was dead-lettered from.
    source_queue_arn: Option<String>,
    /// When it was moved to the queue it is in (or expired in), ms.
    moved_at: Option<u64>,
    /// Times it was received.
    receive_count: Option<i64>,
    /// Its first receive, ms.
    first_receive_at: Option<u64>,
    /// Its last receive, ms.
    last_receive_at: Option<u64>,
    /// Why its consumer last gave it up (NackMessage).
    last_failure_reason: Option<String>,
    /// The class of its last classified failure (NackMessage).
    failure_class: Option<String>,
    /// Times it was replayed (selective redrive, or restore).
    replay_count: u64,
}

/// What a message answers of its provenance, as PeekMessages and
/// ListArchivedMessages both answer it.
pub(crate) struct ProvenanceFields<'a> {
    pub attributes: &'a BTreeMap<String, String>,
    pub message_attributes: &'a BTreeMap<String, MessageAttributeValue>,
    pub receive_count: Option<i64>,
    pub first_receive_timestamp: Option<i64>,
    pub last_receive_timestamp: Option<i64>,
    pub failure_reason: &'a Option<String>,
    pub failure_class: &'a Option<String>,
}

impl Provenance {
    /// The provenance of a message: its own members, else the `Sluice.*`
    /// attributes it was dead-lettered with.
    pub(crate) fn of(m: ProvenanceFields<'_>) -> Self {
        let ms = |v: Option<u64>| v.filter(|&t| t > 0);
        let attribute = |name: &str| m.attributes.get(name).cloned();
        let millis = |name: &str| m.attributes.get(name).and_then(|v| v.parse().ok());
        Self {
            source_queue_arn: attribute("DeadLetterQueueSourceArn"),
            moved_at: ms(millis("Sluice.MovedAt")),
            receive_count: m.receive_count,
            first_receive_at: ms(
                unsigned(m.first_receive_timestamp).or_else(|| millis("Sluice.FirstReceiveAt"))
            ),
            last_receive_at: ms(
                unsigned(m.last_receive_timestamp).or_else(|| millis("Sluice.LastReceiveAt"))
            ),
            last_failure_reason: (m.failure_reason.clone())
                .or_else(|| attribute("Sluice.LastFailureReason")),
            failure_class: (m.failure_class.clone()).or_else(|| attribute("Sluice.FailureClass")),
            replay_count: replay_count_of(m.message_attributes),
        }
    }

    /// The provenance's lines, from the source queue to the replay count,
    /// through `line`; `moved` names when it was moved.
    pub(crate) fn render(&self, moved: &str, line: &mut impl FnMut(&str, String)) {
        let time = |v: Option<u64>| v.map(rfc3339).unwrap_or_else(|| "-".into());
        let text = |v: Option<&str>| v.unwrap_or("-").to_string();
        line(
            "Source queue",
            self.source_queue_arn
                .as_deref()
                .map_or("-".into(), |a| format!("{} ({a})", name_of(a))),
        );
        line(moved, time(self.moved_at));
        line("Receive count", or_null(self.receive_count));
        line("First receive", time(self.first_receive_at));
        line("Last receive", time(self.last_receive_at));
        line(
            "Last failure reason",
            text(self.last_failure_reason.as_deref()),
        );
        line("Failure class", text(self.failure_class.as_deref()));
        line("Replay count", self.replay_count.to_string());
    }
}

/// The [`ProvenanceFields`] of a message of either generated type that
/// answers them (`PeekedMessage`, `ArchivedMessage`): the same members
/// under the same names, which no common trait names.
macro_rules! provenance_fields {
    ($m:expr) => {
        $crate::dlq::browse::ProvenanceFields {
            attributes: &$m.attributes,
            message_attributes: &$m.message_attributes,
            receive_count: $m.receive_count,
            first_receive_timestamp: $m.first_receive_timestamp,
            last_receive_timestamp: $m.last_receive_timestamp,
            failure_reason: &$m.failure_reason,
            failure_class: &$m.failure_class,
        }
    };
}
pub(crate) use provenance_fields;

/// The provenance of a peeked message.
fn provenance_of(m: &PeekedMessage) -> Provenance {
    Provenance::of(provenance_fields!(m))
}

fn render_message(m: &PeekedMessage, p: &Provenance) -> String {
    let time = |v: Option<u64>| v.map(rfc3339).unwrap_or_else(|| "-".into());
    let text = |v: Option<&str>| v.unwrap_or("-").to_string();
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<22}{v}\n"));
    line("Message id", text(m.message_id.as_deref()));
    line("State", text(m.state.as_deref()));
    line("Sent", time(unsigned(m.sent_timestamp)));
    if let Some(g) = &m.message_group_id {
        line("Message group", g.clone());
    }
    p.render("Moved to this queue", &mut line);
    render_attributes_and_body(
        &mut out,
        &m.message_attributes,
        &m.attributes,
        m.body.as_deref(),
    );
    out
}

/// What `dlq show` and `dlq archive show` print of a message after its
/// header lines: its message and system attributes, then its body.
pub(crate) fn render_attributes_and_body(
    out: &mut String,
    message_attributes: &BTreeMap<String, MessageAttributeValue>,
    attributes: &BTreeMap<String, String>,
    body: Option<&str>,
) {
    // The server leaves empty maps out of its answer: none, no section.
    if !message_attributes.is_empty() {
        out.push_str("Message attributes:\n");
        for (name, a) in message_attributes {
            let value = a
                .string_value
                .clone()
                .or_else(|| a.binary_value.as_ref().map(|b| format!("(base64) {b}")))
                .unwrap_or_default();
            let data_type = a.data_type.as_deref().unwrap_or("-");
            out.push_str(&format!("  {name} ({data_type}): {value}\n"));
        }
    }
    if !attributes.is_empty() {
        out.push_str("System attributes:\n");
        for (name, v) in attributes {
            out.push_str(&format!("  {name}: {v}\n"));
        }
    }
    out.push_str("Body:\n");
    out.push_str(body.unwrap_or_default());
    out.push('\n');
}
