//! Topics and subscriptions as every engine stores them (rule N1's
//! storage): create and subscribe idempotent per key, changes atomic and
//! all or nothing, a topic's deletion taking its subscriptions, listings
//! in their documented order. SNS's own rules (names, attributes,
//! confirmation, delivery) are the server's and are tested there.

use std::collections::BTreeMap;

use sluice_core::clock::Millis;

use super::{Harness, attrs};
use crate::{EngineError, Subscription, Topic, Topics};

fn topic(key: &str, created_at: Millis) -> Topic {
    Topic {
        key: key.into(),
        attributes: attrs(&[("DisplayName", key)]),
        tags: BTreeMap::new(),
        created_at,
    }
}

fn sub(id: &str, topic: &str, protocol: &str, endpoint: &str, created_at: Millis) -> Subscription {
    Subscription {
        id: id.into(),
        topic: topic.into(),
        protocol: protocol.into(),
        endpoint: endpoint.into(),
        owner: "000000000000".into(),
        attributes: BTreeMap::new(),
        pending_token: None,
        created_at,
    }
}

fn queue_arn(name: &str) -> String {
    format!("arn:aws:sqs:us-east-1:000000000000:{name}")
}

async fn create_topic<H: Harness>(h: &H, key: &str, created_at: Millis) -> Topic {
    let (stored, created) = h
        .broker()
        .create_topic(topic(key, created_at))
        .await
        .expect("create topic");
    assert!(created, "{key} is new");
    stored
}

async fn subscribe<H: Harness>(h: &H, s: Subscription) -> Subscription {
    let (stored, created) = h.broker().subscribe(s.clone()).await.expect("subscribe");
    assert!(created, "{} is new", s.id);
    assert_eq!(stored, s);
    stored
}

fn ids(subs: &[Subscription]) -> Vec<&str> {
    subs.iter().map(|s| s.id.as_str()).collect()
}

/// N1: creating a topic stores it once; creating its key again returns
/// the topic as first stored, whatever the second call asked for, and
/// says it created nothing.
pub async fn n1_create_topic_is_idempotent_per_key<H: Harness>(h: &H) {
    let b = h.broker();
    let first = topic("t", 1_000);
    let (stored, created) = b.create_topic(first.clone()).await.unwrap();
    assert!(created);
    assert_eq!(stored, first);
    let mut second = topic("t", 2_000);
    second.attributes = attrs(&[("DisplayName", "other")]);
    second.tags = attrs(&[("team", "b")]);
    let (stored, created) = b.create_topic(second).await.unwrap();
    assert!(!created, "the key was taken");
    assert_eq!(stored, first, "the first topic is kept");
    assert_eq!(b.get_topic("t").await.unwrap(), first);
    assert_eq!(b.list_topics().await.unwrap(), ["t"]);
}

/// N1: topics are listed by key, sorted; a deleted topic is gone (its key
/// free again) and a second deletion says so.
pub async fn n1_topics_are_listed_sorted_and_deleted<H: Harness>(h: &H) {
    let b = h.broker();
    assert!(b.list_topics().await.unwrap().is_empty());
    for key in ["b", "c", "a", "us-west-2/111122223333/a"] {
        create_topic(h, key, 1).await;
    }
    assert_eq!(
        b.list_topics().await.unwrap(),
        ["a", "b", "c", "us-west-2/111122223333/a"]
    );
    b.delete_topic("b").await.unwrap();
    assert_eq!(
        b.list_topics().await.unwrap(),
        ["a", "c", "us-west-2/111122223333/a"]
    );
    assert_eq!(b.get_topic("b").await, Err(EngineError::TopicDoesNotExist));
    assert_eq!(
        b.delete_topic("b").await,
        Err(EngineError::TopicDoesNotExist)
    );
    create_topic(h, "b", 2).await;
    assert_eq!(b.get_topic("b").await.unwrap(), topic("b", 2));
}

/// N1: every operation on a topic that does not exist is
/// `TopicDoesNotExist`, and changes nothing.
pub async fn n1_a_missing_topic_is_topic_does_not_exist<H: Harness>(h: &H) {
    let b = h.broker();
    assert_eq!(
        b.get_topic("nope").await,
        Err(EngineError::TopicDoesNotExist)
    );
    assert_eq!(
        b.delete_topic("nope").await,
        Err(EngineError::TopicDoesNotExist)
    );
    let changed = b
        .update_topic("nope", |t: &mut Topic| -> Result<(), ()> {
            t.tags.insert("k".into(), "v".into());
            Ok(())
        })
        .await;
    assert_eq!(changed, Err(EngineError::TopicDoesNotExist));
    assert!(b.list_topics().await.unwrap().is_empty());
}

/// N1: an update applies its change to the stored topic and keeps it: the
/// answer is the topic as stored, and every later read sees it.
pub async fn n1_update_topic_applies_the_change_and_keeps_it<H: Harness>(h: &H) {
    let b = h.broker();
    create_topic(h, "t", 5).await;
    let changed = b
        .update_topic("t", |t: &mut Topic| -> Result<(), String> {
            t.attributes.insert("Policy".into(), "{}".into());
            t.tags.insert("team".into(), "a".into());
            Ok(())
        })
        .await
        .unwrap()
        .unwrap();
    let mut expected = topic("t", 5);
    expected.attributes.insert("Policy".into(), "{}".into());
    expected.tags.insert("team".into(), "a".into());
    assert_eq!(changed, expected);
    assert_eq!(b.get_topic("t").await.unwrap(), expected);
}

/// N1: a change that refuses stores nothing, even what it changed before
/// it refused; its error comes back inside the answer.
pub async fn n1_a_refused_topic_change_stores_nothing<H: Harness>(h: &H) {
    let b = h.broker();
    let before = create_topic(h, "t", 5).await;
    let refused = b
        .update_topic("t", |t: &mut Topic| {
            t.attributes.clear();
            t.tags.insert("half".into(), "done".into());
            Err("too many tags")
        })
        .await
        .unwrap();
    assert_eq!(refused, Err("too many tags"));
    assert_eq!(b.get_topic("t").await.unwrap(), before);
}

/// N1: concurrent changes to one topic apply one after the other: none is
/// lost.
pub async fn n1_concurrent_topic_changes_are_all_kept<H: Harness>(h: &H) {
    create_topic(h, "t", 1).await;
    let mut tasks = Vec::new();
    for i in 0..16 {
        let b = h.broker().clone();
        tasks.push(tokio::spawn(async move {
            b.update_topic("t", move |t: &mut Topic| -> Result<(), ()> {
                let n: u32 = t.tags.get("count").map_or(0, |c| c.parse().unwrap());
                t.tags.insert("count".into(), (n + 1).to_string());
                t.tags.insert(format!("by-{i}"), String::new());
                Ok(())
            })
            .await
        }));
    }
    for task in tasks {
        task.await.unwrap().unwrap().unwrap();
    }
    let t = h.broker().get_topic("t").await.unwrap();
    assert_eq!(t.tags["count"], "16");
    assert_eq!(t.tags.len(), 17);
}

/// N1: subscribing stores a subscription once per topic, protocol and
/// endpoint: the same three again return the one stored (its id, not the
/// new one's); another protocol, endpoint or topic is another one.
pub async fn n1_subscribe_is_idempotent_per_protocol_and_endpoint<H: Harness>(h: &H) {
    let b = h.broker();
    create_topic(h, "t", 1).await;
    create_topic(h, "u", 1).await;
    let first = subscribe(h, sub("s1", "t", "sqs", &queue_arn("q"), 10)).await;
    let mut again = sub("s2", "t", "sqs", &queue_arn("q"), 20);
    again.attributes = attrs(&[("RawMessageDelivery", "true")]);
    let (stored, created) = b.subscribe(again).await.unwrap();
    assert!(!created, "the endpoint is subscribed already");
    assert_eq!(stored, first);
    assert_eq!(
        b.get_subscription("s2").await,
        Err(EngineError::SubscriptionDoesNotExist)
    );
    subscribe(h, sub("s3", "t", "sqs", &queue_arn("other"), 30)).await;
    subscribe(h, sub("s4", "t", "https", &queue_arn("q"), 40)).await;
    subscribe(h, sub("s5", "u", "sqs", &queue_arn("q"), 50)).await;
    assert_eq!(
        ids(&b.subscriptions(Some("t")).await.unwrap()),
        ["s1", "s3", "s4"]
    );
    assert_eq!(ids(&b.subscriptions(Some("u")).await.unwrap()), ["s5"]);
}

/// N1: concurrent subscriptions of one endpoint store one: every caller
/// gets that one, and exactly one caller is told it created it.
pub async fn n1_concurrent_subscribes_store_one_subscription<H: Harness>(h: &H) {
    create_topic(h, "t", 1).await;
    let mut tasks = Vec::new();
    for i in 0..8 {
        let b = h.broker().clone();
        let s = sub(&format!("s{i}"), "t", "sqs", &queue_arn("q"), 10 + i);
        tasks.push(tokio::spawn(async move { b.subscribe(s).await }));
    }
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(task.await.unwrap().unwrap());
    }
    assert_eq!(answers.iter().filter(|(_, created)| *created).count(), 1);
    let stored = h.broker().subscriptions(Some("t")).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert!(answers.iter().all(|(s, _)| *s == stored[0]));
}

/// N1: a subscription needs its topic: subscribing to a topic that never
/// was, or was deleted, is `TopicDoesNotExist` and stores nothing.
pub async fn n1_subscribe_needs_its_topic<H: Harness>(h: &H) {
    let b = h.broker();
    let refused = b
        .subscribe(sub("s1", "nope", "sqs", &queue_arn("q"), 1))
        .await;
    assert_eq!(refused, Err(EngineError::TopicDoesNotExist));
    create_topic(h, "t", 1).await;
    b.delete_topic("t").await.unwrap();
    let refused = b.subscribe(sub("s2", "t", "sqs", &queue_arn("q"), 2)).await;
    assert_eq!(refused, Err(EngineError::TopicDoesNotExist));
    assert!(b.subscriptions(None).await.unwrap().is_empty());
    assert_eq!(
        b.get_subscription("s1").await,
        Err(EngineError::SubscriptionDoesNotExist)
    );
}

/// N1: a subscription is read, changed (a refused change storing nothing)
/// and deleted by id; once deleted, each is `SubscriptionDoesNotExist`.
pub async fn n1_get_update_and_delete_a_subscription<H: Harness>(h: &H) {
    let b = h.broker();
    create_topic(h, "t", 1).await;
    let mut pending = sub("s1", "t", "https", "https://example.com/hook", 10);
    pending.pending_token = Some("token".into());
    subscribe(h, pending.clone()).await;
    assert_eq!(b.get_subscription("s1").await.unwrap(), pending);

    let confirmed = b
        .update_subscription("s1", |s: &mut Subscription| -> Result<(), ()> {
            s.pending_token = None;
            s.attributes
                .insert("RawMessageDelivery".into(), "true".into());
            Ok(())
        })
        .await
        .unwrap()
        .unwrap();
    let mut expected = pending.clone();
    expected.pending_token = None;
    expected.attributes = attrs(&[("RawMessageDelivery", "true")]);
    assert_eq!(confirmed, expected);
    assert_eq!(b.get_subscription("s1").await.unwrap(), expected);
    assert_eq!(
        b.subscriptions(Some("t")).await.unwrap(),
        [expected.clone()]
    );

    let refused = b
        .update_subscription("s1", |s: &mut Subscription| {
            s.attributes.clear();
            Err(7)
        })
        .await
        .unwrap();
    assert_eq!(refused, Err(7));
    assert_eq!(b.get_subscription("s1").await.unwrap(), expected);

    b.delete_subscription("s1").await.unwrap();
    let gone = EngineError::SubscriptionDoesNotExist;
    assert_eq!(b.get_subscription("s1").await, Err(gone.clone()));
    assert_eq!(b.delete_subscription("s1").await, Err(gone.clone()));
    let changed = b
        .update_subscription("s1", |_: &mut Subscription| -> Result<(), ()> { Ok(()) })
        .await;
    assert_eq!(changed, Err(gone));
    assert!(b.subscriptions(Some("t")).await.unwrap().is_empty());
    // The endpoint may subscribe again.
    subscribe(h, sub("s2", "t", "https", "https://example.com/hook", 20)).await;
}

/// N1: what identifies a record stays as stored through an update: a
/// topic's key and creation time; a subscription's id, topic, protocol,
/// endpoint and creation time (its place in every listing).
pub async fn n1_an_update_keeps_what_identifies_a_record<H: Harness>(h: &H) {
    let b = h.broker();
    let t = create_topic(h, "t", 5).await;
    create_topic(h, "u", 5).await;
    let changed = b
        .update_topic("t", |t: &mut Topic| -> Result<(), ()> {
            t.key = "renamed".into();
            t.created_at = 99;
            t.tags.insert("k".into(), "v".into());
            Ok(())
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (changed.key.as_str(), changed.created_at),
        ("t", t.created_at)
    );
    assert_eq!(changed.tags["k"], "v");
    assert_eq!(b.get_topic("t").await.unwrap(), changed);
    assert_eq!(b.list_topics().await.unwrap(), ["t", "u"]);

    let s = subscribe(h, sub("s1", "t", "sqs", &queue_arn("q"), 10)).await;
    subscribe(h, sub("s2", "t", "sqs", &queue_arn("r"), 20)).await;
    let changed = b
        .update_subscription("s1", |s: &mut Subscription| -> Result<(), ()> {
            s.id = "other".into();
            s.topic = "u".into();
            s.protocol = "https".into();
            s.endpoint = queue_arn("r");
            s.created_at = 30;
            s.owner = "111122223333".into();
            Ok(())
        })
        .await
        .unwrap()
        .unwrap();
    let mut expected = s.clone();
    expected.owner = "111122223333".into();
    assert_eq!(changed, expected);
    assert_eq!(b.get_subscription("s1").await.unwrap(), expected);
    assert_eq!(
        ids(&b.subscriptions(Some("t")).await.unwrap()),
        ["s1", "s2"]
    );
    assert!(b.subscriptions(Some("u")).await.unwrap().is_empty());
}

/// N1: deleting a topic deletes its subscriptions, and no other topic's.
pub async fn n1_deleting_a_topic_deletes_its_subscriptions<H: Harness>(h: &H) {
    let b = h.broker();
    create_topic(h, "t", 1).await;
    create_topic(h, "u", 1).await;
    subscribe(h, sub("t1", "t", "sqs", &queue_arn("q"), 10)).await;
    subscribe(h, sub("t2", "t", "https", "https://example.com/", 11)).await;
    subscribe(h, sub("u1", "u", "sqs", &queue_arn("q"), 12)).await;
    b.delete_topic("t").await.unwrap();
    for id in ["t1", "t2"] {
        assert_eq!(
            b.get_subscription(id).await,
            Err(EngineError::SubscriptionDoesNotExist)
        );
    }
    assert!(b.subscriptions(Some("t")).await.unwrap().is_empty());
    assert_eq!(ids(&b.subscriptions(None).await.unwrap()), ["u1"]);
    // A topic of the same key starts with none.
    create_topic(h, "t", 2).await;
    assert!(b.subscriptions(Some("t")).await.unwrap().is_empty());
    subscribe(h, sub("t3", "t", "sqs", &queue_arn("q"), 13)).await;
}

/// N1: subscriptions are listed oldest first, ties by id, per topic and
/// across every topic; a topic that does not exist has none.
pub async fn n1_subscriptions_are_listed_oldest_first_ties_by_id<H: Harness>(h: &H) {
    let b = h.broker();
    create_topic(h, "t", 1).await;
    create_topic(h, "u", 1).await;
    let made = [
        ("d", "t", 30),
        ("b", "u", 20),
        ("c", "t", 20),
        ("a", "t", 40),
        ("e", "u", 10),
        ("f", "t", 20),
    ];
    for (id, topic, at) in made {
        subscribe(h, sub(id, topic, "sqs", &queue_arn(id), at)).await;
    }
    assert_eq!(
        ids(&b.subscriptions(Some("t")).await.unwrap()),
        ["c", "f", "d", "a"]
    );
    assert_eq!(ids(&b.subscriptions(Some("u")).await.unwrap()), ["e", "b"]);
    assert_eq!(
        ids(&b.subscriptions(None).await.unwrap()),
        ["e", "b", "c", "f", "d", "a"]
    );
    assert!(b.subscriptions(Some("nope")).await.unwrap().is_empty());
    let all = b.subscriptions(None).await.unwrap();
    assert_eq!(all[0], sub("e", "u", "sqs", &queue_arn("e"), 10));
}
