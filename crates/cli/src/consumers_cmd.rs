//! `sluice consumers`: list a server's push consumers with their state, and
//! create, change, pause, resume and delete them, through the
//! ListConsumers, CreateConsumer, UpdateConsumer, PauseConsumer,
//! ResumeConsumer and DeleteConsumer actions (rules C8–C10).

use clap::{Args, Subcommand};
use sluice_client::sluice::{
    Consumer, CreateConsumerRequest, DeleteConsumerRequest, ListConsumersRequest,
    PauseConsumerRequest, ResumeConsumerRequest, UpdateConsumerRequest,
};

use crate::admin::{Connection, out, outln, print_json};
use crate::table::{Table, or_null};

/// `sluice consumers …`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ConsumersArgs {
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    command: Option<ConsumersCommand>,
    /// With no subcommand: list the consumers (as `list`).
    #[command(flatten)]
    list: ListArgs,
}

#[derive(Subcommand, Debug)]
enum ConsumersCommand {
    /// Every consumer with its state, batches in flight and settings (the default).
    List(ListArgs),
    /// Create a consumer, checked as the config file's `[[consumers]]` are;
    /// it is saved in the data directory and starts again after a restart
    /// (not on PostgreSQL: there it lasts until the node restarts).
    Create(CreateArgs),
    /// Change the settings given of a consumer created at run time; it
    /// restarts with them. Consumers of the config file are changed there.
    Update(UpdateArgs),
    /// Delete a consumer created at run time (its batches in flight stop:
    /// their messages come back after their visibility timeout).
    Delete(NameArgs),
    /// Stop a consumer from receiving; batches already posted finish.
    Pause(NameArgs),
    /// Let a paused consumer receive again.
    Resume(NameArgs),
}

#[derive(Args, Debug)]
struct ListArgs {
    /// Only the consumers of this queue (name or URL).
    #[arg(long, value_name = "QUEUE")]
    queue: Option<String>,
    /// Print the ListConsumers answer as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct NameArgs {
    /// The consumer.
    #[arg(value_name = "CONSUMER")]
    name: String,
}

#[derive(Args, Debug)]
struct CreateArgs {
    /// Unique name of the consumer.
    #[arg(value_name = "CONSUMER")]
    name: String,
    /// The queue read (name or URL).
    #[arg(long, value_name = "QUEUE")]
    queue: String,
    /// The handler's http:// or https:// URL, where batches are POSTed.
    #[arg(long, value_name = "URL")]
    url: String,
    #[command(flatten)]
    settings: Settings,
}

#[derive(Args, Debug)]
struct UpdateArgs {
    /// The consumer.
    #[arg(value_name = "CONSUMER")]
    name: String,
    /// Another queue to read (name or URL).
    #[arg(long, value_name = "QUEUE")]
    queue: Option<String>,
    /// Another handler URL.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    #[command(flatten)]
    settings: Settings,
}

/// The settings both `create` (defaults in brackets) and `update` (left
/// out: unchanged) take.
#[derive(Args, Debug)]
struct Settings {
    /// Most messages per batch: 1–10,000, 1–10 on a FIFO queue; above 10
    /// needs --batching-window [default: 10].
    #[arg(long, value_name = "N")]
    batch_size: Option<u32>,
    /// Seconds to gather a batch after its first message, 0–300; not on
    /// FIFO queues [default: 0].
    #[arg(long, value_name = "SECONDS")]
    batching_window: Option<u64>,
    /// Most batches in flight at once, 2–1,000 [default: 2].
    #[arg(long, value_name = "N")]
    max_concurrency: Option<u32>,
    /// The handler's time limit in seconds, at most the queue's visibility
    /// timeout [default: 30].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Read `batchItemFailures` from the handler's answer (true or false;
    /// alone: true) [default: false].
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    report_batch_item_failures: Option<bool>,
    /// A Lambda filter pattern, e.g. '{"body": {"type": ["order"]}}'; up
    /// to 5, given once each: a message matching none is deleted without
    /// delivery [default: none].
    #[arg(long = "filter", value_name = "PATTERN")]
    filters: Vec<String>,
    /// Remove the consumer's filter patterns (update).
    #[arg(long, conflicts_with = "filters")]
    no_filter: bool,
    /// Delete without delivery the messages whose idempotency key is
    /// completed: KEY is `message_id` or a JSON path into the body, e.g.
    /// `$.order.id` (update: `""` stops it) [default: none].
    #[arg(long, value_name = "KEY")]
    skip_completed: Option<String>,
}

impl Settings {
    /// The settings into a CreateConsumer input.
    fn create(
        &self,
        name: &str,
        queue_url: Option<String>,
        url: Option<String>,
    ) -> CreateConsumerRequest {
        // Seconds beyond i64 are refused by the server as out of range.
        let seconds = |s: u64| i64::try_from(s).unwrap_or(i64::MAX);
        CreateConsumerRequest {
            name: Some(name.to_string()),
            queue_url,
            url,
            batch_size: self.batch_size.map(i64::from),
            batching_window_seconds: self.batching_window.map(seconds),
            max_concurrency: self.max_concurrency.map(i64::from),
            timeout_seconds: self.timeout.map(seconds),
            report_batch_item_failures: self.report_batch_item_failures,
            filters: (!self.filters.is_empty() || self.no_filter).then(|| self.filters.clone()),
            skip_completed: self.skip_completed.clone(),
        }
    }

    /// The settings into an UpdateConsumer input: the members of
    /// CreateConsumer, each left out unchanged.
    fn update(
        &self,
        name: &str,
        queue_url: Option<String>,
        url: Option<String>,
    ) -> UpdateConsumerRequest {
        // Destructured, so a member added to one input and not the other
        // does not compile unnoticed.
        let CreateConsumerRequest {
            name,
            queue_url,
            url,
            batch_size,
            batching_window_seconds,
            max_concurrency,
            timeout_seconds,
            report_batch_item_failures,
            filters,
            skip_completed,
        } = self.create(name, queue_url, url);
        UpdateConsumerRequest {
            name,
            queue_url,
            url,
            batch_size,
            batching_window_seconds,
            max_concurrency,
            timeout_seconds,
            report_batch_item_failures,
            filters,
            skip_completed,
        }
    }
}

/// Runs the command: exit 0, or 1 with `error: …` when the server refuses.
pub async fn run(args: ConsumersArgs) -> anyhow::Result<u8> {
    let client = args.connection.client()?;
    match args.command.unwrap_or(ConsumersCommand::List(args.list)) {
        ConsumersCommand::List(list) => {
            let queue_url = match &list.queue {
                Some(queue) => Some(client.queue_url(queue).await?),
                None => None,
            };
            let answer = client.call(&ListConsumersRequest { queue_url }).await?;
            if list.json {
                print_json(&answer);
                return Ok(0);
            }
            let consumers = answer.consumers;
            if consumers.is_empty() {
                outln!("no consumers");
            } else {
                out!("{}", table(&consumers));
            }
        }
        ConsumersCommand::Create(create) => {
            let queue_url = client.queue_url(&create.queue).await?;
            let input = create
                .settings
                .create(&create.name, Some(queue_url), Some(create.url));
            client.call(&input).await?;
            outln!("consumer {} created", create.name);
        }
        ConsumersCommand::Update(update) => {
            let queue_url = match &update.queue {
                Some(queue) => Some(client.queue_url(queue).await?),
                None => None,
            };
            let input = update
                .settings
                .update(&update.name, queue_url, update.url.clone());
            client.call(&input).await?;
            outln!("consumer {} updated", update.name);
        }
        ConsumersCommand::Delete(n) => {
            let name = Some(n.name.clone());
            client.call(&DeleteConsumerRequest { name }).await?;
            outln!("consumer {} deleted", n.name);
        }
        ConsumersCommand::Pause(n) => {
            let name = Some(n.name.clone());
            client.call(&PauseConsumerRequest { name }).await?;
            outln!("consumer {} paused", n.name);
        }
        ConsumersCommand::Resume(n) => {
            let name = Some(n.name.clone());
            client.call(&ResumeConsumerRequest { name }).await?;
            outln!("consumer {} resumed", n.name);
        }
    }
    Ok(0)
}

/// One line per consumer: name, queue, state, batches in flight over the
/// current limit, settings, where it was declared, handler URL.
fn table(consumers: &[Consumer]) -> String {
    let mut t = Table::new(&[
        "CONSUMER",
        "QUEUE",
        "STATE",
        "IN FLIGHT",
        "BATCH",
        "WINDOW",
        "MAX CONC",
        "TIMEOUT",
        "ITEM FAILURES",
        "FILTERS",
        "SOURCE",
        "URL",
    ]);
    for c in consumers {
        t.row(vec![
            or_null(c.name.as_deref()),
            or_null(c.queue_name.as_deref()),
            or_null(c.state.as_deref()),
            format!(
                "{}/{}",
                or_null(c.in_flight_batches),
                or_null(c.concurrency_limit)
            ),
            or_null(c.batch_size),
            format!("{} s", or_null(c.batching_window_seconds)),
            or_null(c.max_concurrency),
            format!("{} s", or_null(c.timeout_seconds)),
            if c.report_batch_item_failures == Some(true) {
                "yes".into()
            } else {
                "no".into()
            },
            match c.filters.len() {
                0 => "-".into(),
                n => n.to_string(),
            },
            or_null(c.source.as_deref()),
            or_null(c.url.as_deref()),
        ]);
    }
    t.render()
}
