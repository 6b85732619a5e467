//! `dlq peek` and `dlq show`: read messages without receiving them
//! (PeekMessages, rule X1), with their provenance (rule X2).

use serde_json::{Value, json};

use super::args::{PeekArgs, ShowArgs};
use crate::admin::{out, outln, print_json};
use crate::inventory::name_of;
use crate::table::{Table, duration, shorten};
use crate::timefmt::{now_ms, rfc3339};
use sluice_client::Client;
use sluice_client::requests::{FilterInput, PeekMessagesInput};

/// The largest PeekMessages page.
const MAX_PAGE: usize = 100;

/// The message attribute a selective redrive counts replays in (rule X3).
pub const REPLAY_COUNT: &str = "sluice.replay-count";

/// One page of PeekMessages: the messages and the next page's token.
pub async fn peek_page(
    client: &Client,
    url: &str,
    filter: &FilterInput,
    size: usize,
    token: Option<&str>,
) -> anyhow::Result<(Vec<Value>, Option<String>)> {
    let input = PeekMessagesInput {
        queue_url: Some(url.to_string()),
        max_results: Some(size.clamp(1, MAX_PAGE) as i64),
        next_token: token.map(str::to_string),
        filter: filter.clone(),
    };
    let out = client.peek_messages(&input).await?;
    Ok((out.messages, out.next_token))
}

/// Up to `limit` matching messages (all of them when `None`), page after page.
pub async fn peek_messages(
    client: &Client,
    url: &str,
    filter: &FilterInput,
    limit: Option<usize>,
) -> anyhow::Result<Vec<Value>> {
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
pub fn replay_count(message: &Value) -> u64 {
    message["MessageAttributes"][REPLAY_COUNT]["StringValue"]
        .as_str()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A timestamp attribute in ms (the `Sluice.*` provenance attributes are
/// strings of milliseconds).
fn millis_attribute(message: &Value, name: &str) -> Option<u64> {
    message["Attributes"][name]
        .as_str()
        .and_then(|v| v.parse().ok())
}

/// `dlq peek`.
pub async fn peek(client: &Client, args: PeekArgs) -> anyhow::Result<u8> {
    let url = client.queue_url(&args.queue).await?;
    let filter = args.filter.to_input(client).await?;
    let limit = (!args.all).then_some(args.limit as usize);
    let messages = peek_messages(client, &url, &filter, limit).await?;
    if args.json {
        print_json(&json!({ "QueueUrl": url, "Messages": messages }));
        return Ok(0);
    }
    if messages.is_empty() {
        outln!("no matching messages in {}", name_of(&url));
        return Ok(0);
    }
    let now = now_ms();
    // FIFO (and fair) queues: show the group, which decides the order.
    let grouped = messages.iter().any(|m| m["MessageGroupId"].is_string());
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
    if grouped {
        columns.insert(3, "GROUP");
    }
    let mut table = Table::new(&columns);
    for m in &messages {
        let sent = m["SentTimestamp"].as_u64().unwrap_or(0);
        let mut row = vec![
            m["MessageId"].as_str().unwrap_or("").to_string(),
            duration(now.saturating_sub(sent) / 1000),
            m["State"].as_str().unwrap_or("").to_string(),
            m["ReceiveCount"].to_string(),
            replay_count(m).to_string(),
            m["Attributes"]["DeadLetterQueueSourceArn"]
                .as_str()
                .map(|a| name_of(a).to_string())
                .unwrap_or_else(|| "-".into()),
            shorten(m["FailureReason"].as_str().unwrap_or("-"), 40),
            shorten(m["Body"].as_str().unwrap_or(""), 50),
        ];
        if grouped {
            row.insert(3, shorten(m["MessageGroupId"].as_str().unwrap_or("-"), 20));
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
            &FilterInput::default(),
            MAX_PAGE,
            token.as_deref(),
        )
        .await?;
        if let Some(m) = page
            .into_iter()
            .find(|m| m["MessageId"] == args.message_id.as_str())
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
    let provenance = provenance(&message);
    if args.json {
        print_json(&json!({ "QueueUrl": url, "Message": message, "Provenance": provenance }));
        return Ok(0);
    }
    out!("{}", render_message(&message, &provenance));
    Ok(0)
}

/// Where a dead-lettered message came from and what happened to it (X2).
fn provenance(m: &Value) -> Value {
    let ms = |v: Option<u64>| v.filter(|&t| t > 0);
    json!({
        "SourceQueueArn": m["Attributes"]["DeadLetterQueueSourceArn"],
        "MovedAt": ms(millis_attribute(m, "Sluice.MovedAt")),
        "ReceiveCount": m["ReceiveCount"],
        "FirstReceiveAt": ms(m["FirstReceiveTimestamp"].as_u64().or_else(|| millis_attribute(m, "Sluice.FirstReceiveAt"))),
        "LastReceiveAt": ms(m["LastReceiveTimestamp"].as_u64().or_else(|| millis_attribute(m, "Sluice.LastReceiveAt"))),
        "LastFailureReason": m.get("FailureReason").cloned().unwrap_or(m["Attributes"]["Sluice.LastFailureReason"].clone()),
        "ReplayCount": replay_count(m),
    })
}

fn render_message(m: &Value, p: &Value) -> String {
    let time = |v: &Value| v.as_u64().map(rfc3339).unwrap_or_else(|| "-".into());
    let text = |v: &Value| v.as_str().unwrap_or("-").to_string();
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<22}{v}\n"));
    line("Message id", text(&m["MessageId"]));
    line("State", text(&m["State"]));
    line("Sent", time(&m["SentTimestamp"]));
    if let Some(g) = m["MessageGroupId"].as_str() {
        line("Message group", g.to_string());
    }
    line(
        "Source queue",
        p["SourceQueueArn"]
            .as_str()
            .map_or("-".into(), |a| format!("{} ({a})", name_of(a))),
    );
    line("Moved to this queue", time(&p["MovedAt"]));
    line("Receive count", p["ReceiveCount"].to_string());
    line("First receive", time(&p["FirstReceiveAt"]));
    line("Last receive", time(&p["LastReceiveAt"]));
    line("Last failure reason", text(&p["LastFailureReason"]));
    line("Replay count", p["ReplayCount"].to_string());
    if let Some(attrs) = m["MessageAttributes"].as_object() {
        out.push_str("Message attributes:\n");
        for (name, a) in attrs {
            let value = a["StringValue"]
                .as_str()
                .map(str::to_string)
                .or_else(|| a["BinaryValue"].as_str().map(|b| format!("(base64) {b}")))
                .unwrap_or_default();
            out.push_str(&format!("  {name} ({}): {value}\n", text(&a["DataType"])));
        }
    }
    if let Some(attrs) = m["Attributes"].as_object() {
        out.push_str("System attributes:\n");
        for (name, v) in attrs {
            out.push_str(&format!("  {name}: {}\n", v.as_str().unwrap_or_default()));
        }
    }
    out.push_str("Body:\n");
    out.push_str(m["Body"].as_str().unwrap_or_default());
    out.push('\n');
    out
}
