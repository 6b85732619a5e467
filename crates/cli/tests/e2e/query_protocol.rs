//! The AWS Query protocol, black box (W1, W2, W3): every SQS action as form
//! parameters (POST to `/` or to the queue URL path, or GET), XML answers in
//! the 2012-11-05 namespace with a RequestId, and bad input answered with the
//! exact SQS `<ErrorResponse>` while nothing stored changes (W5). A few JSON
//! error forms (W2) are checked here too, through the raw client.
//!
//! Requests are written as forms, `Action&Name=Value&…`: the first field is
//! the Action, values are sent URL-encoded (so they may hold `=` but no `&`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sluice_core::Clock;

use crate::common::{RawClient, RawResponse, TestServer, xml_values};

const NS: &str = "http://queue.amazonaws.com/doc/2012-11-05/";
const NO_QUEUE: &str = "AWS.SimpleQueueService.NonExistentQueue";
const BAD_VALUE: &str = "InvalidParameterValue";
const MISSING: &str = "MissingParameter";
const BAD_HANDLE: &str = "ReceiptHandleIsInvalid";
/// md5("hello"), computed outside sluice.
const MD5_HELLO: &str = "5d41402abc4b2a76b9719d911017c592";
/// Base64 of the bytes 00 01 02 FF.
const BLOB_B64: &str = "AAEC/w==";

type Params<'a> = &'a [(&'a str, &'a str)];

/// `Action&K=V&…` as form parameters; a field without `=` is the Action.
fn form<'a>(s: &'a str) -> Vec<(&'a str, &'a str)> {
    let field = |p: &'a str| p.split_once('=').unwrap_or(("Action", p));
    s.split('&').filter(|p| !p.is_empty()).map(field).collect()
}

/// `K=V&K=V` as a map.
fn map(s: &str) -> BTreeMap<String, String> {
    let owned = |(k, v): (&str, &str)| (k.to_string(), v.to_string());
    form(s).into_iter().map(owned).collect()
}

/// `Attribute.N.Name` / `Attribute.N.Value` fields from `Name=Value&…`.
fn attributes(s: &str) -> String {
    let mut out = String::new();
    for (i, (k, v)) in form(s).into_iter().enumerate() {
        let n = i + 1;
        out += &format!("&Attribute.{n}.Name={k}&Attribute.{n}.Value={v}");
    }
    out
}

/// `{prefix}MessageAttribute.N.*` fields from (name, DataType, value);
/// Binary values go in `BinaryValue` (base64), others in `StringValue`.
fn message_attributes(prefix: &str, specs: &[(&str, &str, &str)]) -> String {
    let mut out = String::new();
    for (i, (name, ty, value)) in specs.iter().enumerate() {
        let key = format!("&{prefix}MessageAttribute.{}", i + 1);
        let binary = ty.starts_with("Binary");
        let kind = if binary { "Binary" } else { "String" };
        out += &format!("{key}.Name={name}{key}.Value.DataType={ty}");
        out += &format!("{key}.Value.{kind}Value={value}");
    }
    out
}

/// W1: a success is 200 `text/xml`, `<ActionResponse xmlns=…>`, and a
/// RequestId that matches the `x-amzn-requestid` header.
#[track_caller]
fn ok(r: &RawResponse, action: &str) {
    assert_eq!(r.status, 200, "{action}: {}", r.body);
    assert_eq!(r.header("content-type"), Some("text/xml"));
    let root = format!("<{action}Response xmlns=\"{NS}\">");
    assert!(r.body.contains(&root), "{action}: {}", r.body);
    let id = text(r, "RequestId");
    assert!(!id.is_empty());
    assert_eq!(r.header("x-amzn-requestid"), Some(id.as_str()));
}

/// W2: an `<ErrorResponse>` with `<Type>Sender</Type>`, the exact code and
/// HTTP status, a message and a RequestId.
#[track_caller]
fn err_status(r: &RawResponse, status: u16, code: &str) {
    assert_eq!(text(r, "Code"), code, "{}", r.body);
    assert_eq!(r.status, status, "{code}: {}", r.body);
    let root = format!("<ErrorResponse xmlns=\"{NS}\"><Error><Type>Sender</Type>");
    assert!(r.body.contains(&root), "{}", r.body);
    assert!(!text(r, "Message").is_empty(), "{}", r.body);
    let id = text(r, "RequestId");
    assert!(!id.is_empty());
    assert_eq!(r.header("x-amzn-requestid"), Some(id.as_str()));
}

/// W2: as [`err_status`], HTTP 400.
#[track_caller]
fn err(r: &RawResponse, code: &str) {
    err_status(r, 400, code);
}

/// The first `<tag>`'s text, or "".
fn text(r: &RawResponse, tag: &str) -> String {
    r.xml(tag).unwrap_or_default()
}

/// Raw (still escaped) inner text of every `<tag>` element.
fn elements(body: &str, tag: &str) -> Vec<String> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        out.push(after[..j].to_string());
        rest = &after[j + close.len()..];
    }
    out
}

fn leaf(fragment: &str, tag: &str) -> String {
    let all = xml_values(fragment, tag);
    all.into_iter().next().unwrap_or_default()
}

/// `<tag><{key}>k</{key}><Value>v</Value></tag>` elements as a map.
fn pairs(body: &str, tag: &str, key: &str) -> BTreeMap<String, String> {
    let each = elements(body, tag).into_iter();
    each.map(|e| (leaf(&e, key), leaf(&e, "Value"))).collect()
}

/// The `Id` of every `<tag>` entry of a batch result.
fn ids(r: &RawResponse, tag: &str) -> Vec<String> {
    let each = elements(&r.body, tag).into_iter();
    each.map(|e| leaf(&e, "Id")).collect()
}

/// `Id=Code` of every `<BatchResultErrorEntry>`, each a sender fault.
fn failed(r: &RawResponse) -> BTreeMap<String, String> {
    let each = elements(&r.body, "BatchResultErrorEntry").into_iter();
    let sender = |e: &String| assert_eq!(leaf(e, "SenderFault"), "true");
    let code = |e: String| (leaf(&e, "Id"), leaf(&e, "Code"));
    each.inspect(sender).map(code).collect()
}

/// Query requests to one path: `/` or a queue's URL path (W1: the path names
/// the queue, no QueueUrl parameter needed).
#[derive(Clone)]
struct Q {
    raw: RawClient,
    path: String,
}

impl Q {
    fn at(raw: RawClient, path: &str) -> Q {
        let path = path.to_string();
        Q { raw, path }
    }

    fn queue(&self, name: &str) -> Q {
        Q::at(self.raw, &format!("/000000000000/{name}"))
    }

    /// POSTs `form` plus `extra` fields, with the `Version` SDKs send.
    fn with(&self, form_: &str, extra: Params) -> RawResponse {
        let p = [form(form_), extra.to_vec(), vec![("Version", "2012-11-05")]];
        self.raw.query(&self.path, &p.concat())
    }

    fn call(&self, form: &str) -> RawResponse {
        self.with(form, &[])
    }

    fn get(&self, form_: &str) -> RawResponse {
        self.raw.query_get(&self.path, &form(form_))
    }

    /// The call succeeds (see [`ok`]).
    #[track_caller]
    fn ok_with(&self, form_: &str, extra: Params) -> RawResponse {
        let r = self.with(form_, extra);
        ok(&r, form(form_)[0].1);
        r
    }

    #[track_caller]
    fn ok(&self, form: &str) -> RawResponse {
        self.ok_with(form, &[])
    }

    /// The call fails with HTTP 400 and `code`.
    #[track_caller]
    fn fails(&self, form: &str, code: &str) {
        err(&self.call(form), code);
    }

    #[track_caller]
    fn create(&self, name: &str, fields: &str) -> String {
        let r = self.ok(&format!("CreateQueue&QueueName={name}{fields}"));
        text(&r, "QueueUrl")
    }

    #[track_caller]
    fn send(&self, body: &str) -> RawResponse {
        self.ok_with("SendMessage", &[("MessageBody", body)])
    }

    #[track_caller]
    fn receive(&self, fields: &str) -> Vec<Msg> {
        messages(&self.ok(&format!("ReceiveMessage&{fields}")))
    }

    #[track_caller]
    fn bodies(&self, fields: &str) -> Vec<String> {
        self.receive(fields).into_iter().map(|m| m.body).collect()
    }

    /// GetQueueAttributes with `AttributeName.N` for each of `names` (`a,b`).
    #[track_caller]
    fn attrs(&self, names: &str) -> BTreeMap<String, String> {
        let each = names.split(',').enumerate();
        let field = |(i, n)| format!("&AttributeName.{}={n}", i + 1_usize);
        let fields: String = each.map(field).collect();
        let r = self.ok(&format!("GetQueueAttributes{fields}"));
        pairs(&r.body, "Attribute", "Name")
    }

    /// ApproximateNumberOfMessages, …NotVisible, …Delayed.
    #[track_caller]
    fn counts(&self) -> [u32; 3] {
        let a = self.attrs("All");
        let n = |k: &str| a[&format!("ApproximateNumberOfMessages{k}")].parse();
        let n = |k: &str| n(k).unwrap();
        [n(""), n("NotVisible"), n("Delayed")]
    }

    #[track_caller]
    fn tags(&self) -> BTreeMap<String, String> {
        pairs(&self.ok("ListQueueTags").body, "Tag", "Key")
    }
}

/// A server with these queues created, and a client for `/`.
async fn setup(queues: &[&str]) -> (TestServer, Q) {
    let server = TestServer::start().await;
    let sqs = Q::at(server.raw(), "/");
    for q in queues {
        sqs.create(q, "");
    }
    (server, sqs)
}

/// A received message, parsed from its `<Message>` element.
#[derive(Debug)]
struct Msg {
    id: String,
    handle: String,
    body: String,
    md5: String,
    system: BTreeMap<String, String>,
    /// name → (DataType, StringValue or BinaryValue)
    user: BTreeMap<String, (String, String)>,
    md5_attrs: String,
}

fn messages(r: &RawResponse) -> Vec<Msg> {
    let attribute = |a: String| {
        let value = leaf(&a, "StringValue") + &leaf(&a, "BinaryValue");
        (leaf(&a, "Name"), (leaf(&a, "DataType"), value))
    };
    let each = elements(&r.body, "Message").into_iter();
    each.map(|m| Msg {
        id: leaf(&m, "MessageId"),
        handle: leaf(&m, "ReceiptHandle"),
        body: leaf(&m, "Body"),
        md5: leaf(&m, "MD5OfBody"),
        system: pairs(&m, "Attribute", "Name"),
        user: elements(&m, "MessageAttribute")
            .into_iter()
            .map(attribute)
            .collect(),
        md5_attrs: leaf(&m, "MD5OfMessageAttributes"),
    })
    .collect()
}

/// W1, V9, V11, W5: CreateQueue with Attribute.N and Tag.N; the same name with
/// the same (or no) attributes returns the same URL, with a different one is
/// QueueAlreadyExists and changes nothing; GetQueueUrl finds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w1_v9_create_queue_with_attributes_and_tags() {
    let (server, sqs) = setup(&[]).await;
    let tags = "&Tag.1.Key=team&Tag.1.Value=payments&Tag.2.Key=env&Tag.2.Value=dev";
    let spec = attributes("VisibilityTimeout=40&DelaySeconds=3") + tags;
    let url = sqs.create("orders", &spec);
    assert_eq!(url, format!("{}/000000000000/orders", server.endpoint));
    let q = sqs.queue("orders");
    let attrs = q.attrs("VisibilityTimeout,DelaySeconds");
    assert_eq!(attrs, map("VisibilityTimeout=40&DelaySeconds=3"));
    assert_eq!(q.tags(), map("team=payments&env=dev"));
    // V9: identical attributes, or none, give back the same URL.
    assert_eq!(sqs.create("orders", &spec), url);
    assert_eq!(sqs.create("orders", ""), url);
    let get = "GetQueueUrl&QueueName=orders";
    for r in [sqs.call(get), sqs.get(get)] {
        ok(&r, "GetQueueUrl");
        assert_eq!(text(&r, "QueueUrl"), url);
    }
    sqs.fails("GetQueueUrl&QueueName=nope", NO_QUEUE);
    // V9, W5: a different attribute is QueueAlreadyExists; nothing changes.
    q.send("kept");
    let vt41 = attributes("VisibilityTimeout=41");
    let again = format!("CreateQueue&QueueName=orders{vt41}");
    sqs.fails(&again, "QueueAlreadyExists");
    assert_eq!(q.attrs("VisibilityTimeout"), map("VisibilityTimeout=40"));
    assert_eq!(q.counts(), [0, 0, 1], "delayed by the queue's 3 s");
}

/// W1: ListQueues by QueueNamePrefix, paged with MaxResults and NextToken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w1_list_queues_prefix_and_paging() {
    let (server, sqs) = setup(&["alpha-1", "alpha-2", "alpha-3", "beta"]).await;
    let url = |n: &str| format!("{}/000000000000/{n}", server.endpoint);
    let list = |fields: &str| {
        let r = sqs.ok(&format!("ListQueues&{fields}"));
        (r.xml_all("QueueUrl"), text(&r, "NextToken"))
    };
    let (all, token) = list("");
    assert_eq!(
        (all.len(), token),
        (4, String::new()),
        "no MaxResults, no paging"
    );
    let r = sqs.get("ListQueues&QueueNamePrefix=alpha");
    ok(&r, "ListQueues");
    let alphas = ["alpha-1", "alpha-2", "alpha-3"].map(url);
    assert_eq!(r.xml_all("QueueUrl"), alphas);
    let (page, token) = list("QueueNamePrefix=alpha&MaxResults=2");
    assert_eq!(page, ["alpha-1", "alpha-2"].map(url));
    let next = format!("QueueNamePrefix=alpha&MaxResults=2&NextToken={token}");
    assert_eq!(list(&next), (vec![url("alpha-3")], String::new()));
    assert_eq!(list("QueueNamePrefix=zzz"), (vec![], String::new()));
    sqs.fails("ListQueues&MaxResults=0", BAD_VALUE);
}

/// V9, W2: DeleteQueue removes the queue and its messages; using it after is
/// NonExistentQueue; the name can be created again, empty.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v9_delete_queue_then_use_is_non_existent_queue() {
    let (server, sqs) = setup(&["gone", "other"]).await;
    let gone = sqs.queue("gone");
    gone.send("hello");
    gone.ok("DeleteQueue");
    gone.fails("SendMessage&MessageBody=x", NO_QUEUE);
    gone.fails("ReceiveMessage", NO_QUEUE);
    gone.fails("GetQueueAttributes&AttributeName.1=All", NO_QUEUE);
    gone.fails("DeleteQueue", NO_QUEUE);
    sqs.fails("GetQueueUrl&QueueName=gone", NO_QUEUE);
    let other = format!("{}/000000000000/other", server.endpoint);
    assert_eq!(sqs.ok("ListQueues").xml_all("QueueUrl"), [other]);
    server.clock.advance_secs(61);
    sqs.create("gone", "");
    assert_eq!(gone.counts(), [0, 0, 0]);
}

/// V11: GetQueueAttributes with All (GET on the queue URL) and with named
/// attributes; the ApproximateNumberOfMessages* counts follow the messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v11_get_queue_attributes_all_named_and_counts() {
    let (server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let r = q.get("GetQueueAttributes&AttributeName.1=All");
    ok(&r, "GetQueueAttributes");
    let all = pairs(&r.body, "Attribute", "Name");
    let created = server.clock.now() / 1000;
    let arn = "arn:aws:sqs:us-east-1:000000000000:q";
    let want = map(&format!(
        "QueueArn={arn}&VisibilityTimeout=30&DelaySeconds=0&MaximumMessageSize=1048576\
         &MessageRetentionPeriod=345600&ReceiveMessageWaitTimeSeconds=0\
         &ApproximateNumberOfMessages=0&ApproximateNumberOfMessagesNotVisible=0\
         &ApproximateNumberOfMessagesDelayed=0&CreatedTimestamp={created}\
         &LastModifiedTimestamp={created}"
    ));
    for (k, v) in &want {
        assert_eq!(all.get(k), Some(v), "{k}: {all:?}");
    }
    assert!(!all.contains_key("RedrivePolicy") && !all.contains_key("FifoQueue"));
    for body in ["a", "b", "c"] {
        q.send(body);
    }
    q.ok("SendMessage&MessageBody=later&DelaySeconds=60");
    assert_eq!(q.receive("").len(), 1);
    assert_eq!(q.counts(), [2, 1, 1]);
    let named = q.attrs("ApproximateNumberOfMessagesNotVisible,QueueArn");
    let want = format!("ApproximateNumberOfMessagesNotVisible=1&QueueArn={arn}");
    assert_eq!(named, map(&want));
    server.clock.advance_secs(60);
    assert_eq!(q.counts(), [4, 0, 0]);
}

/// V11, W5: SetQueueAttributes changes what it names; a bad value is
/// InvalidAttributeValue and changes nothing, even the valid attributes
/// beside it; unknown names are InvalidAttributeName in Set and Get.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v11_set_queue_attributes_all_or_nothing() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let set = |s: &str| format!("SetQueueAttributes{}", attributes(s));
    let set_bad = |s: &str| set(&format!("DelaySeconds=5&{s}"));
    q.ok(&set("VisibilityTimeout=60&MaximumMessageSize=2048"));
    let names = "VisibilityTimeout,MaximumMessageSize,DelaySeconds";
    let before = q.attrs(names);
    let want = "VisibilityTimeout=60&MaximumMessageSize=2048&DelaySeconds=0";
    assert_eq!(before, map(want));
    for (bad, code) in [
        ("VisibilityTimeout=43201", "InvalidAttributeValue"),
        ("MessageRetentionPeriod=59", "InvalidAttributeValue"),
        ("MaximumMessageSize=abc", "InvalidAttributeValue"),
        ("Bogus=1", "InvalidAttributeName"),
        ("QueueArn=arn:x", "InvalidAttributeName"),
    ] {
        q.fails(&set_bad(bad), code);
        assert_eq!(q.attrs(names), before, "{bad} changed the queue");
    }
    let get = "GetQueueAttributes&AttributeName.1=QueueArn&AttributeName.2=Bogus";
    q.fails(get, "InvalidAttributeName");
}

/// V8: PurgeQueue deletes every message; a second purge within 60 s (no clock
/// move needed) is PurgeQueueInProgress and the messages sent since stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v8_purge_queue_and_purge_in_progress() {
    let (server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    for body in ["a", "b", "c"] {
        q.send(body);
    }
    q.receive("");
    q.ok("PurgeQueue");
    assert_eq!(q.counts(), [0, 0, 0]);
    q.send("after");
    let r = q.call("PurgeQueue");
    let code = "AWS.SimpleQueueService.PurgeQueueInProgress";
    assert_eq!([text(&r, "Code"), text(&r, "Type")], [code, "Sender"]);
    assert_eq!(q.counts(), [1, 0, 0]);
    server.clock.advance_secs(61);
    q.ok("PurgeQueue");
    assert_eq!(q.counts(), [0, 0, 0]);
}

/// V8, W2: PurgeQueueInProgress is HTTP 403 in SQS (its API model, bundled in
/// crates/protocol/model, says `httpStatusCode: 403`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v8_w2_purge_in_progress_is_http_403() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    q.ok("PurgeQueue");
    let code = "AWS.SimpleQueueService.PurgeQueueInProgress";
    err_status(&q.call("PurgeQueue"), 403, code);
}

/// V1, W4: SendMessage with String, Binary (base64) and Number attributes:
/// MessageId is a UUID, MD5OfMessageBody and MD5OfMessageAttributes match
/// values computed outside sluice, and ReceiveMessage gives all back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_w4_send_message_with_attributes_and_digests() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let specs = [
        ("color", "String", "red"),
        ("blob", "Binary", BLOB_B64),
        ("n", "Number", "42"),
    ];
    let attrs = message_attributes("", &specs);
    let r = q.ok(&format!("SendMessage&MessageBody=hello{attrs}"));
    assert!(r.body.contains("<SendMessageResult><MD5OfMessageBody>"));
    assert_eq!(text(&r, "MD5OfMessageBody"), MD5_HELLO);
    let attrs_md5 = "79b836b08a4d022ea252a8273f43ef0f";
    assert_eq!(text(&r, "MD5OfMessageAttributes"), attrs_md5);
    let id = text(&r, "MessageId");
    let dashes: Vec<usize> = id.match_indices('-').map(|(i, _)| i).collect();
    assert_eq!((id.len(), dashes), (36, vec![8, 13, 18, 23]), "{id}");
    let m = q.receive("MessageAttributeName.1=All").remove(0);
    assert_eq!([m.id, m.body, m.md5], [id.as_str(), "hello", MD5_HELLO]);
    assert_eq!(m.md5_attrs, attrs_md5);
    let want = specs.map(|(n, t, v)| (n.to_string(), (t.to_string(), v.to_string())));
    assert_eq!(m.user, BTreeMap::from(want));
}

/// V1, L3: per-message DelaySeconds hides a message until it passes and
/// overrides the queue's DelaySeconds (0 too); 901 is InvalidParameterValue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_l3_send_message_delay_seconds() {
    let (server, sqs) = setup(&[]).await;
    sqs.create("q", &attributes("DelaySeconds=10"));
    let q = sqs.queue("q");
    q.ok("SendMessage&MessageBody=five&DelaySeconds=5");
    q.send("queue-default");
    q.ok("SendMessage&MessageBody=now&DelaySeconds=0");
    assert_eq!(q.counts(), [1, 0, 2]);
    assert_eq!(q.bodies("MaxNumberOfMessages=10"), ["now"]);
    server.clock.advance_secs(5);
    assert_eq!(q.bodies("MaxNumberOfMessages=10"), ["five"]);
    server.clock.advance_secs(5);
    assert_eq!(q.bodies("MaxNumberOfMessages=10"), ["queue-default"]);
    q.fails("SendMessage&MessageBody=x&DelaySeconds=901", BAD_VALUE);
    q.fails("SendMessage&MessageBody=x&DelaySeconds=-1", BAD_VALUE);
    assert_eq!(q.counts(), [0, 3, 0]);
}

/// L2, V1, W4: SendMessageBatch: each entry succeeds or fails on its own,
/// as `<SendMessageBatchResultEntry>` and `<BatchResultErrorEntry>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_send_message_batch_successful_and_failed() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let e = "SendMessageBatchRequestEntry";
    let attrs = message_attributes(&format!("{e}.1."), &[("color", "String", "red")]);
    let r = q.ok(&format!(
        "SendMessageBatch&{e}.1.Id=first&{e}.1.MessageBody=hello{attrs}\
         &{e}.2.Id=bad_body&{e}.2.MessageBody=bad\u{1}\
         &{e}.3.Id=delayed-3&{e}.3.MessageBody=two&{e}.3.DelaySeconds=30"
    ));
    let first = "<SendMessageBatchResult><SendMessageBatchResultEntry>";
    assert!(r.body.contains(first));
    let sent = ids(&r, "SendMessageBatchResultEntry");
    assert_eq!(sent, ["first", "delayed-3"]);
    let entries = elements(&r.body, "SendMessageBatchResultEntry");
    assert_eq!(leaf(&entries[0], "MD5OfMessageBody"), MD5_HELLO);
    assert_eq!(leaf(&entries[0], "MD5OfMessageAttributes").len(), 32);
    let md5_two = "b8a9f715dbb64fd5c56e7783c6820a61";
    assert_eq!(leaf(&entries[1], "MD5OfMessageBody"), md5_two);
    assert!(entries.iter().all(|e| leaf(e, "MessageId").len() == 36));
    assert_eq!(failed(&r), map("bad_body=InvalidMessageContents"));
    assert_eq!(q.counts(), [1, 0, 1]);
}

/// V2, V3, L3: MaxNumberOfMessages bounds a receive; received messages are
/// hidden for the queue's or the request's VisibilityTimeout, then come back
/// with ApproximateReceiveCount incremented.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_v3_receive_max_number_and_visibility_timeout() {
    let (server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    for i in 0..5 {
        q.send(&format!("m{i}"));
    }
    assert_eq!(q.receive("MaxNumberOfMessages=3").len(), 3);
    assert_eq!(q.receive("MaxNumberOfMessages=10").len(), 2);
    let r = q.ok("ReceiveMessage&MaxNumberOfMessages=10");
    // An empty result is one empty element, as SQS writes it (rule W7).
    let empty = "<ReceiveMessageResult/>";
    assert!(r.body.contains(empty), "{}", r.body);
    assert_eq!(q.counts(), [0, 5, 0]);
    server.clock.advance_secs(29);
    assert!(q.receive("").is_empty());
    server.clock.advance_secs(1);
    assert_eq!(q.counts(), [5, 0, 0]);
    // The request's VisibilityTimeout wins over the queue's 30 s.
    let count = "AttributeName.1=ApproximateReceiveCount";
    let mut got = q.receive(&format!("VisibilityTimeout=10&{count}"));
    let got = got.remove(0);
    assert_eq!(got.system, map("ApproximateReceiveCount=2"));
    assert_eq!(q.receive("MaxNumberOfMessages=10").len(), 4);
    server.clock.advance_secs(9);
    assert!(q.receive("").is_empty());
    server.clock.advance_secs(1);
    let again = q.receive(count).remove(0);
    let want = (got.id, map("ApproximateReceiveCount=3"));
    assert_eq!((again.id, again.system), want);
}

/// V2: AttributeName.N selects system attributes: All gives SenderId,
/// SentTimestamp, ApproximateReceiveCount, ApproximateFirstReceiveTimestamp;
/// a name gives only itself; none gives none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_receive_system_attribute_names() {
    let (server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let sent_at = server.clock.now();
    q.send("hello");
    server.clock.advance_secs(2);
    let first = server.clock.now();
    let got = q.receive("AttributeName.1=All&VisibilityTimeout=0");
    let want = format!(
        "ApproximateFirstReceiveTimestamp={first}&ApproximateReceiveCount=1\
         &SenderId=000000000000&SentTimestamp={sent_at}"
    );
    assert_eq!(got[0].system, map(&want));
    let one = q.receive("AttributeName.1=ApproximateReceiveCount&VisibilityTimeout=0");
    assert_eq!(one[0].system, map("ApproximateReceiveCount=2"));
    assert!(q.receive("")[0].system.is_empty());
}

/// W4, V2: MessageAttributeName.N selects user attributes (All, `prefix.*`,
/// an exact name) and MD5OfMessageAttributes covers exactly those returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w4_receive_message_attribute_names_all_and_prefix() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let specs = [("meta.a", "String", "1"), ("meta.b", "String", "2")];
    let specs = [&specs[..], &[("other", "String", "3")]].concat();
    let attrs = message_attributes("", &specs);
    q.ok(&format!("SendMessage&MessageBody=hello{attrs}"));
    let look = |sel: &str| {
        let m = q.receive(&format!("VisibilityTimeout=0&{sel}")).remove(0);
        let names: Vec<String> = m.user.into_keys().collect();
        (names.join(","), m.md5_attrs)
    };
    let md5_meta = "2108650fb41ae4c48790e35707a724e0";
    let meta = ("meta.a,meta.b".to_string(), md5_meta.to_string());
    assert_eq!(look("MessageAttributeName.1=meta.*"), meta);
    let md5_all = "daf635809e5469c9a7875ad9d5d2cbbe";
    let all = ("meta.a,meta.b,other".to_string(), md5_all.to_string());
    assert_eq!(look("MessageAttributeName.1=All"), all);
    let one = look("MessageAttributeName.1=other&MessageAttributeName.2=missing");
    assert_eq!(one.0, "other");
    assert_eq!(look(""), (String::new(), String::new()));
}

/// V6, L3: a receive returns at once when a message is there even with
/// WaitTimeSeconds=20, wakes when one arrives, and with WaitTimeSeconds=1 on
/// an empty queue answers empty after about a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v6_wait_time_seconds_short() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let start = Instant::now();
    assert!(q.receive("WaitTimeSeconds=1").is_empty());
    let waited = start.elapsed();
    let about_1s = waited >= Duration::from_millis(900) && waited < Duration::from_secs(10);
    assert!(about_1s, "{waited:?}");
    q.send("ready");
    let start = Instant::now();
    assert_eq!(q.bodies("WaitTimeSeconds=20"), ["ready"]);
    assert!(start.elapsed() < Duration::from_secs(5));
    let sender = q.clone();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        sender.send("late");
    });
    let start = Instant::now();
    assert_eq!(q.bodies("WaitTimeSeconds=20"), ["late"]);
    assert!(start.elapsed() < Duration::from_secs(10));
    sender.join().unwrap();
}

/// V4: DeleteMessage with a receipt handle deletes the message; deleting
/// again succeeds; a malformed handle, or one of another queue, is
/// ReceiptHandleIsInvalid and deletes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v4_delete_message_and_invalid_receipt_handle() {
    let (_server, sqs) = setup(&["q", "other"]).await;
    let (q, other) = (sqs.queue("q"), sqs.queue("other"));
    q.send("a");
    other.send("b");
    let h = q.receive("").remove(0).handle;
    let other_h = other.receive("").remove(0).handle;
    for bad in ["garbage", other_h.as_str()] {
        q.fails(&format!("DeleteMessage&ReceiptHandle={bad}"), BAD_HANDLE);
    }
    assert_eq!((q.counts(), other.counts()), ([0, 1, 0], [0, 1, 0]));
    q.ok(&format!("DeleteMessage&ReceiptHandle={h}"));
    assert_eq!(q.counts(), [0, 0, 0]);
    q.ok(&format!("DeleteMessage&ReceiptHandle={h}"));
    q.fails("DeleteMessage", MISSING);
}

/// L2, V4: DeleteMessageBatch: valid handles succeed, a bad one fails alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_v4_delete_message_batch() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    for b in ["a", "b", "c"] {
        q.send(b);
    }
    let got = q.receive("MaxNumberOfMessages=2");
    let e = "DeleteMessageBatchRequestEntry";
    let (h1, h2) = (&got[0].handle, &got[1].handle);
    let r = q.ok(&format!(
        "DeleteMessageBatch&{e}.1.Id=one&{e}.1.ReceiptHandle={h1}\
         &{e}.2.Id=broken&{e}.2.ReceiptHandle=garbage&{e}.3.Id=two&{e}.3.ReceiptHandle={h2}"
    ));
    assert_eq!(ids(&r, "DeleteMessageBatchResultEntry"), ["one", "two"]);
    assert_eq!(failed(&r), map(&format!("broken={BAD_HANDLE}")));
    assert_eq!(q.counts(), [1, 0, 0]);
}

/// V5, V20, L3: ChangeMessageVisibility sets the remaining invisibility from
/// now (0: visible at once; more: a heartbeat), also through the latest
/// handle once the visibility ended; out of range is InvalidParameterValue;
/// a malformed handle is ReceiptHandleIsInvalid. Errors change nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v5_change_message_visibility() {
    let (server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    q.send("a");
    let change = |h: &str, v: &str| {
        format!("ChangeMessageVisibility&ReceiptHandle={h}&VisibilityTimeout={v}")
    };
    let h = q.receive("").remove(0).handle;
    q.ok(&change(&h, "0"));
    assert_eq!(q.counts(), [1, 0, 0]);
    let h = q.receive("").remove(0).handle;
    server.clock.advance_secs(20);
    q.ok(&change(&h, "100"));
    server.clock.advance_secs(99);
    assert!(q.receive("").is_empty(), "the heartbeat counts from now");
    for v in ["43201", "-1", "abc"] {
        q.fails(&change(&h, v), BAD_VALUE);
    }
    q.fails(&change("garbage", "0"), BAD_HANDLE);
    assert_eq!(q.counts(), [0, 1, 0]);
    server.clock.advance_secs(1);
    assert_eq!(q.counts(), [1, 0, 0]);
    // V20: the visibility expired and nobody received the message since, so
    // its latest handle still changes the visibility (AWS recorded answer,
    // LocalStack snapshot
    // test_change_message_visibility_after_visibility_timeout_expiration[sqs_query]).
    q.ok(&change(&h, "60"));
    assert_eq!(q.counts(), [0, 1, 0]);
    q.ok(&change(&h, "0"));
    let again = q.receive("AttributeName.1=ApproximateReceiveCount");
    assert_eq!(again[0].system, map("ApproximateReceiveCount=3"));
}

/// L2, V5: ChangeMessageVisibilityBatch: each entry succeeds or fails alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_v5_change_message_visibility_batch() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    q.send("a");
    q.send("b");
    let got = q.receive("MaxNumberOfMessages=2");
    let e = "ChangeMessageVisibilityBatchRequestEntry";
    let (h1, h2) = (&got[0].handle, &got[1].handle);
    let r = q.ok(&format!(
        "ChangeMessageVisibilityBatch\
         &{e}.1.Id=show&{e}.1.ReceiptHandle={h1}&{e}.1.VisibilityTimeout=0\
         &{e}.2.Id=too_long&{e}.2.ReceiptHandle={h2}&{e}.2.VisibilityTimeout=43201\
         &{e}.3.Id=garbage&{e}.3.ReceiptHandle=garbage&{e}.3.VisibilityTimeout=0"
    ));
    assert_eq!(ids(&r, "ChangeMessageVisibilityBatchResultEntry"), ["show"]);
    let want = format!("garbage={BAD_HANDLE}&too_long={BAD_VALUE}");
    assert_eq!(failed(&r), map(&want));
    assert_eq!(q.counts(), [1, 1, 0]);
    assert_eq!(q.bodies(""), [got[0].body.clone()]);
}

/// W1: TagQueue (Tag.N.Key/Value) adds or replaces, UntagQueue (TagKey.N)
/// removes, ListQueueTags lists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w1_tag_untag_and_list_queue_tags() {
    let (_server, sqs) = setup(&[]).await;
    sqs.create("q", "&Tag.1.Key=keep&Tag.1.Value=1");
    let q = sqs.queue("q");
    q.ok("TagQueue&Tag.1.Key=a&Tag.1.Value=x&Tag.2.Key=keep&Tag.2.Value=2");
    assert_eq!(q.tags(), map("a=x&keep=2"));
    q.ok("UntagQueue&TagKey.1=a&TagKey.2=absent");
    assert_eq!(q.tags(), map("keep=2"));
    q.ok("UntagQueue&TagKey.1=keep");
    let r = q.ok("ListQueueTags");
    let empty = "<ListQueueTagsResult/>";
    assert!(r.body.contains(empty), "{}", r.body);
    q.fails("TagQueue", MISSING);
    q.fails("UntagQueue", MISSING);
}

/// V11: AddPermission (Label, AWSAccountId.N, ActionName.N) writes a
/// statement into the Policy attribute; RemovePermission takes it out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v11_add_and_remove_permission_via_policy() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let add = "AddPermission&Label=share&AWSAccountId.1=111122223333\
               &AWSAccountId.2=444455556666&ActionName.1=SendMessage&ActionName.2=ReceiveMessage";
    q.ok(add);
    let policy = q.attrs("Policy")["Policy"].clone();
    let doc: Value = serde_json::from_str(&policy).unwrap();
    let st = &doc["Statement"][0];
    assert_eq!(
        [&st["Sid"], &st["Effect"]],
        [&json!("share"), &json!("Allow")]
    );
    let root = |a: &str| format!("arn:aws:iam::{a}:root");
    // V15: the accounts in the order AWS lists them (recorded answer,
    // LocalStack snapshot test_sqs_permission_lifecycle).
    let principals = [root("444455556666"), root("111122223333")];
    assert_eq!(st["Principal"]["AWS"], json!(principals));
    let actions = json!(["SQS:SendMessage", "SQS:ReceiveMessage"]);
    assert_eq!(st["Action"], actions);
    assert_eq!(st["Resource"], "arn:aws:sqs:us-east-1:000000000000:q");
    // The same label again, or an action that cannot be shared, is refused.
    q.fails(add, BAD_VALUE);
    let unshareable = "AddPermission&Label=x&AWSAccountId.1=1&ActionName.1=CreateQueue";
    q.fails(unshareable, BAD_VALUE);
    q.fails("AddPermission&Label=y&ActionName.1=SendMessage", MISSING);
    assert_eq!(q.attrs("Policy")["Policy"], policy);
    q.fails("RemovePermission&Label=nope", BAD_VALUE);
    q.ok("RemovePermission&Label=share");
    let after = q.attrs("Policy");
    let parse = |p: &String| serde_json::from_str::<Value>(p).unwrap();
    let doc = after.get("Policy").map(parse);
    let no_statement = |d: Value| d["Statement"].as_array().is_none_or(Vec::is_empty);
    assert!(doc.is_none_or(no_statement), "{after:?}");
}

const LIST_SOURCES: &str = "ListDeadLetterSourceQueues";

/// R1, R6: ListDeadLetterSourceQueues lists the queues whose RedrivePolicy
/// targets the DLQ, paged with MaxResults/NextToken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r6_list_dead_letter_source_queues() {
    let (server, sqs) = setup(&["dlq", "unrelated"]).await;
    let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
    let policy = format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"3"}}"#);
    let policy = format!("RedrivePolicy={policy}");
    for src in ["src-a", "src-b"] {
        sqs.create(src, &attributes(&policy));
    }
    let rp = sqs.queue("src-a").attrs("RedrivePolicy")["RedrivePolicy"].clone();
    let rp: Value = serde_json::from_str(&rp).unwrap();
    assert_eq!(rp["deadLetterTargetArn"], arn);
    let url = |n: &str| format!("{}/000000000000/{n}", server.endpoint);
    let list = |q: &str, fields: &str| {
        let r = sqs.queue(q).ok(&format!("{LIST_SOURCES}&{fields}"));
        (r.xml_all("QueueUrl"), text(&r, "NextToken"))
    };
    let r = sqs.queue("dlq").ok(LIST_SOURCES);
    let wrapped = "<ListDeadLetterSourceQueuesResult><QueueUrl>";
    assert!(r.body.contains(wrapped), "{}", r.body);
    assert_eq!(r.xml_all("QueueUrl"), [url("src-a"), url("src-b")]);
    let (page, token) = list("dlq", "MaxResults=1");
    assert_eq!(page, [url("src-a")]);
    let (page, _) = list("dlq", &format!("MaxResults=1&NextToken={token}"));
    assert_eq!(page, [url("src-b")]);
    assert_eq!(list("unrelated", ""), (vec![], String::new()));
    sqs.queue("nope").fails(LIST_SOURCES, NO_QUEUE);
}

/// W2, L1, W5: an unknown Action is InvalidAction; no Action is
/// MissingAction; missing QueueName / MessageBody / QueueUrl are
/// MissingParameter; an unknown queue is NonExistentQueue; nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w2_bad_action_missing_parameters_and_non_existent_queue() {
    let (_server, sqs) = setup(&["q"]).await;
    let (q, nope) = (sqs.queue("q"), sqs.queue("nope"));
    sqs.fails("DoSomething&QueueName=x", "InvalidAction");
    err(&sqs.get("CreateQueues&QueueName=x"), "InvalidAction");
    // No action: 404 and an UnknownOperationException document (AWS
    // recorded answer, rule W7).
    for r in [sqs.call("QueueName=x"), sqs.get("")] {
        assert_eq!(r.status, 404, "{}", r.body);
        assert!(
            r.body.contains("<UnknownOperationException/>"),
            "{}",
            r.body
        );
    }
    sqs.fails("CreateQueue", MISSING);
    sqs.fails("GetQueueUrl", MISSING);
    q.fails("SendMessage", MISSING);
    q.fails("SendMessage&MessageBody=", MISSING);
    sqs.fails("SendMessage&MessageBody=x", MISSING);
    nope.fails("SendMessage&MessageBody=x", NO_QUEUE);
    nope.fails("PurgeQueue", NO_QUEUE);
    nope.fails("ListQueueTags", NO_QUEUE);
    assert_eq!(q.counts(), [0, 0, 0]);
    assert_eq!(sqs.ok("ListQueues").xml_all("QueueUrl").len(), 1);
}

/// L3, W5: ReceiveMessage parameters out of range are InvalidParameterValue
/// and receive nothing (the message stays visible, its count unchanged).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l3_receive_parameter_ranges() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    q.send("hello");
    for p in [
        "MaxNumberOfMessages=11",
        "MaxNumberOfMessages=0",
        "MaxNumberOfMessages=abc",
        "VisibilityTimeout=43201",
        "VisibilityTimeout=-1",
        "WaitTimeSeconds=21",
        "WaitTimeSeconds=-1",
    ] {
        q.fails(&format!("ReceiveMessage&{p}"), BAD_VALUE);
        assert_eq!(q.counts(), [1, 0, 0], "{p}");
    }
    let got = q.receive("AttributeName.1=ApproximateReceiveCount");
    assert_eq!(got[0].system, map("ApproximateReceiveCount=1"));
}

/// L5: queue names are 1–80 of `[A-Za-z0-9_-]`; others are InvalidParameterValue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l5_invalid_queue_names() {
    let (_server, sqs) = setup(&[]).await;
    let long = "a".repeat(81);
    let names = ["has space", "dot.name", "slash/name", "ümlaut", &long];
    for name in names {
        sqs.fails(&format!("CreateQueue&QueueName={name}"), BAD_VALUE);
    }
    sqs.create(&"a".repeat(80), "");
    sqs.create("Az09_-", "");
    assert_eq!(sqs.ok("ListQueues").xml_all("QueueUrl").len(), 2);
}

/// A SendMessageBatch form of `n` entries with ids `id(i)` and bodies `body`.
fn batch(n: usize, id: impl Fn(usize) -> String, body: &str) -> String {
    let e = "SendMessageBatchRequestEntry";
    let entry = |i| format!("&{e}.{i}.Id={}&{e}.{i}.MessageBody={body}", id(i));
    "SendMessageBatch".to_string() + &(1..=n).map(entry).collect::<String>()
}

/// L2, W5: a batch of 11 entries, duplicate ids, an invalid id, or a total
/// over 1 MiB fails as a whole with SQS's code, and sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_batch_request_errors() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let sqs_code = |c: &str| format!("AWS.SimpleQueueService.{c}");
    let plain = |i| format!("e{i}");
    let twice = |i: usize| format!("e{}", i.min(2));
    let spaced = |i: usize| ["ok", "bad id!"][i - 1].to_string();
    let big = "x".repeat(600_000);
    for (form, code) in [
        (batch(11, plain, "m"), "TooManyEntriesInBatchRequest"),
        (batch(3, twice, "m"), "BatchEntryIdsNotDistinct"),
        (batch(2, spaced, "m"), "InvalidBatchEntryId"),
        (batch(1, |_| "x".repeat(81), "m"), "InvalidBatchEntryId"),
        (batch(2, plain, &big), "BatchRequestTooLong"),
    ] {
        q.fails(&form, &sqs_code(code));
    }
    let e = "DeleteMessageBatchRequestEntry";
    let dup = format!("DeleteMessageBatch&{e}.1.Id=a&{e}.1.ReceiptHandle=h&{e}.2.Id=a");
    let dup = format!("{dup}&{e}.2.ReceiptHandle=h");
    q.fails(&dup, &sqs_code("BatchEntryIdsNotDistinct"));
    assert_eq!(q.counts(), [0, 0, 0]);
}

/// L2, W2: a batch with no entries is EmptyBatchRequest, as SQS answers a
/// Query batch that carries no `…RequestEntry.N` parameters.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_empty_batch_is_empty_batch_request() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let batches = ["SendMessage", "DeleteMessage", "ChangeMessageVisibility"];
    for action in batches {
        let action = format!("{action}Batch");
        q.fails(&action, "AWS.SimpleQueueService.EmptyBatchRequest");
    }
}

/// L1, W5: a body with U+0001 is InvalidMessageContents; past the queue's
/// MaximumMessageSize (body plus attributes) is InvalidParameterValue;
/// neither is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l1_invalid_body_characters_and_maximum_message_size() {
    let (_server, sqs) = setup(&[]).await;
    sqs.create("q", &attributes("MaximumMessageSize=1024"));
    let q = sqs.queue("q");
    for body in ["bad\u{1}char", "\u{FFFE}", "nul\u{0}"] {
        let r = q.with("SendMessage", &[("MessageBody", body)]);
        err(&r, "InvalidMessageContents");
    }
    let x = |n: usize| format!("SendMessage&MessageBody={}", "x".repeat(n));
    q.fails(&x(1025), BAD_VALUE);
    // Attribute names, types and values count toward the size: 1020 + 1 + 6 + 1.
    let attrs = message_attributes("", &[("n", "String", "v")]);
    q.fails(&(x(1020) + &attrs), BAD_VALUE);
    assert_eq!(q.counts(), [0, 0, 0]);
    let r = q.send(&"x".repeat(1024));
    let md5_1024 = "7265f4d211b56873a381d321f586e4a9";
    assert_eq!(text(&r, "MD5OfMessageBody"), md5_1024);
    assert_eq!(q.counts(), [1, 0, 0]);
}

/// W1, W4: `<`, `&`, `"`, `'`, `>` and `\r\n` in a body come back identical,
/// escaped so that XML parsers keep the carriage return (`&#xD;`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w1_xml_escaping_round_trip() {
    let (_server, sqs) = setup(&["q"]).await;
    let q = sqs.queue("q");
    let body = "<a href=\"x\">&amp; 'q' \r\n</a>\tend";
    let md5 = "83af17412f3ea8b7f6b65c61fda67562";
    assert_eq!(text(&q.send(body), "MD5OfMessageBody"), md5);
    let r = q.ok("ReceiveMessage");
    assert_eq!(text(&r, "Body"), body);
    let escaped = "&lt;a href=&quot;x&quot;&gt;&amp;amp; &apos;q&apos; &#xD;\n&lt;/a&gt;";
    assert!(r.body.contains(escaped), "{}", r.body);
    assert_eq!(text(&r, "MD5OfBody"), md5);
}

/// W3: a QueueUrl with another host (and scheme) but this account and name
/// addresses the queue, in a POST body or a GET query string to `/`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w3_queue_url_with_other_host_addresses_the_queue() {
    let (_server, sqs) = setup(&["q"]).await;
    let url = "https://sqs.eu-west-1.amazonaws.com/000000000000/q";
    sqs.ok(&format!("SendMessage&QueueUrl={url}&MessageBody=hi"));
    let r = sqs.get("ReceiveMessage&QueueUrl=http://localhost:9324/000000000000/q");
    ok(&r, "ReceiveMessage");
    assert_eq!(text(&r, "Body"), "hi");
    assert_eq!(sqs.queue("q").counts(), [0, 1, 0]);
}

/// W3: the account is part of the address: a URL naming another account is
/// not this account's queue (SQS: NonExistentQueue), and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w3_queue_url_of_another_account_is_not_the_queue() {
    let (_server, sqs) = setup(&["q"]).await;
    let url = "http://localhost:9324/111111111111/q";
    let send = format!("SendMessage&QueueUrl={url}&MessageBody=m");
    sqs.fails(&send, NO_QUEUE);
    Q::at(sqs.raw, "/111111111111/q").fails("SendMessage&MessageBody=m", NO_QUEUE);
    assert_eq!(sqs.queue("q").counts(), [0, 0, 0]);
}

/// W2: the JSON protocol's error form: `__type` shape and the
/// `x-amzn-query-error` header; malformed JSON is SerializationException;
/// an unknown target is InvalidAction. Nothing changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn w2_json_protocol_error_form() {
    let (server, sqs) = setup(&["q"]).await;
    let raw = sqs.raw;
    let check = |r: RawResponse, shape: &str, query_code: &str| {
        let body: Value = serde_json::from_str(&r.body).expect("a JSON error body");
        assert_eq!(r.status, 400, "{}", r.body);
        assert_eq!(r.header("content-type"), Some("application/x-amz-json-1.0"));
        assert_eq!(body["__type"], format!("com.amazonaws.sqs#{shape}"));
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
        let header = format!("{query_code};Sender");
        assert_eq!(r.header("x-amzn-query-error"), Some(header.as_str()));
        assert!(r.header("x-amzn-requestid").is_some());
    };
    let r = raw.json("GetQueueUrl", r#"{"QueueName":"nope"}"#);
    check(r, "QueueDoesNotExist", NO_QUEUE);
    let url = format!("{}/000000000000/q", server.endpoint);
    let truncated = format!(r#"{{"QueueUrl":"{url}","MessageBody":"#);
    let r = raw.json("SendMessage", &truncated);
    check(r, "SerializationException", "SerializationException");
    let empty = format!(r#"{{"QueueUrl":"{url}","Entries":[]}}"#);
    let r = raw.json("SendMessageBatch", &empty);
    let code = "AWS.SimpleQueueService.EmptyBatchRequest";
    check(r, "EmptyBatchRequest", code);
    let r = raw.json("Frobnicate", "{}");
    check(r, "InvalidAction", "InvalidAction");
    assert_eq!(sqs.queue("q").counts(), [0, 0, 0]);
}

/// R7, W1: StartMessageMoveTask, ListMessageMoveTasks and
/// CancelMessageMoveTask in the Query protocol.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r7_message_move_tasks_real_time() {
    let (_server, sqs) = setup(&["dlq"]).await;
    let arn = "arn:aws:sqs:us-east-1:000000000000:dlq";
    let policy =
        format!(r#"RedrivePolicy={{"deadLetterTargetArn":"{arn}","maxReceiveCount":"1"}}"#);
    sqs.create("src", &attributes(&policy));
    let src = sqs.queue("src");
    src.send("poison");
    assert_eq!(src.bodies("VisibilityTimeout=0"), ["poison"]);
    assert!(src.bodies("").is_empty(), "moved to the DLQ");
    let started = sqs.ok_with("StartMessageMoveTask", &[("SourceArn", arn)]);
    assert!(!text(&started, "TaskHandle").is_empty());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = sqs.ok_with(
            "ListMessageMoveTasks",
            &[("SourceArn", arn), ("MaxResults", "10")],
        );
        assert!(
            r.body
                .contains("<ListMessageMoveTasksResult><ListMessageMoveTasksResultEntry>"),
            "{}",
            r.body
        );
        if text(&r, "Status") == "COMPLETED" {
            assert_eq!(text(&r, "ApproximateNumberOfMessagesMoved"), "1");
            assert_eq!(text(&r, "ApproximateNumberOfMessagesToMove"), "1");
            break;
        }
        assert!(Instant::now() < deadline, "{}", r.body);
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(src.bodies(""), ["poison"], "back in its source");
    // A string that is no handle at all (rule R9; AWS recorded answer,
    // LocalStack snapshot test_sqs_move_task.py::test_cancel_with_invalid_task_handle).
    let r = sqs.with("CancelMessageMoveTask", &[("TaskHandle", "no-such-task")]);
    err_status(&r, 400, "InvalidParameterValue");
}

/// F1, F2, F3, W1: FIFO queues in the Query protocol: group order, dedup
/// by content, sequence numbers and FIFO system attributes in XML.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f1_f3_fifo_in_the_query_protocol() {
    let (_server, sqs) = setup(&[]).await;
    let fields = attributes("FifoQueue=true&ContentBasedDeduplication=true");
    sqs.create("jobs.fifo", &fields);
    let q = sqs.queue("jobs.fifo");
    q.fails("SendMessage&MessageBody=x", MISSING);
    let first = q.ok("SendMessage&MessageBody=one&MessageGroupId=g");
    let dup = q.ok("SendMessage&MessageBody=one&MessageGroupId=g");
    assert_eq!(
        text(&dup, "MessageId"),
        text(&first, "MessageId"),
        "deduplicated"
    );
    assert_eq!(text(&dup, "SequenceNumber"), text(&first, "SequenceNumber"));
    q.ok("SendMessage&MessageBody=two&MessageGroupId=g");
    let r = q.ok("ReceiveMessage&MaxNumberOfMessages=1&AttributeName.1=All");
    assert_eq!(text(&r, "Body"), "one");
    let attrs = pairs(&r.body, "Attribute", "Name");
    assert_eq!(attrs["MessageGroupId"], "g");
    assert_eq!(attrs["SequenceNumber"], text(&first, "SequenceNumber"));
    assert!(
        q.bodies("MaxNumberOfMessages=10").is_empty(),
        "group g waits for 'one'"
    );
}
