//! SNS topics and subscriptions across nodes (rule N1's storage), with
//! engines on one database as nodes: what one stores the others read, a
//! new engine after every other is gone reads it too, and two nodes
//! subscribing one endpoint at once store one subscription. Without
//! PostgreSQL's binaries every test says SKIPPED and passes (with
//! SLUICE_REQUIRE_POSTGRES=1 it fails).

use std::collections::BTreeMap;
use std::sync::Arc;

use sluice_broker::{EngineError, Subscription, Topic, Topics};
use sluice_core::ManualClock;
use sluice_postgres::{PostgresBroker, PostgresOptions, testing};

async fn node(url: &str) -> PostgresBroker {
    let options = PostgresOptions {
        pool_size: 4,
        ..Default::default()
    };
    PostgresBroker::connect(url, Arc::new(ManualClock::default()), options)
        .await
        .expect("connect to the test database")
}

fn topic(key: &str) -> Topic {
    Topic {
        key: key.into(),
        attributes: BTreeMap::from([("DisplayName".into(), "Orders".into())]),
        tags: BTreeMap::from([("team".into(), "a".into())]),
        created_at: 1_700_000_000_000,
    }
}

fn sub(id: &str, topic: &str, endpoint: &str) -> Subscription {
    Subscription {
        id: id.into(),
        topic: topic.into(),
        protocol: "sqs".into(),
        endpoint: endpoint.into(),
        owner: "000000000000".into(),
        attributes: BTreeMap::from([("FilterPolicy".into(), r#"{"a":["b"]}"#.into())]),
        pending_token: Some("token".into()),
        created_at: 1_700_000_000_001,
    }
}

/// N1: a topic and its subscription stored through one node are read
/// through another, changes included, and by an engine connected after
/// both are gone; a topic deleted through one is gone for the other,
/// its subscriptions with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_topics_are_shared_by_every_node_and_outlive_them() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let (a, b) = (node(&url).await, node(&url).await);
    let (t, _) = a.create_topic(topic("orders")).await.unwrap();
    a.create_topic(topic("gone")).await.unwrap();
    a.subscribe(sub("s1", "orders", "q1")).await.unwrap();
    b.subscribe(sub("s2", "gone", "q1")).await.unwrap();
    let s = b
        .update_subscription("s1", |s: &mut Subscription| -> Result<(), ()> {
            s.pending_token = None;
            Ok(())
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(b.get_topic("orders").await.unwrap(), t);
    assert_eq!(a.get_subscription("s1").await.unwrap(), s);
    let (again, created) = b.create_topic(topic("orders")).await.unwrap();
    assert!(!created);
    assert_eq!(again, t);
    b.delete_topic("gone").await.unwrap();
    assert_eq!(
        a.get_subscription("s2").await,
        Err(EngineError::SubscriptionDoesNotExist)
    );
    assert_eq!(
        a.subscribe(sub("s3", "gone", "q2")).await,
        Err(EngineError::TopicDoesNotExist)
    );
    drop((a, b));

    let c = node(&url).await;
    assert_eq!(c.list_topics().await.unwrap(), ["orders"]);
    assert_eq!(c.get_topic("orders").await.unwrap(), t);
    assert_eq!(
        c.subscriptions(None).await.unwrap(),
        std::slice::from_ref(&s)
    );
    assert_eq!(c.subscriptions(Some("orders")).await.unwrap(), [s]);
}

/// N1: two nodes subscribing one endpoint of a topic at the same time
/// store one subscription, the one both are answered with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn n1_one_subscription_per_endpoint_across_nodes() {
    let Some(cluster) = testing::cluster() else {
        return;
    };
    let url = cluster.fresh_database().await;
    let (a, b) = (node(&url).await, node(&url).await);
    a.create_topic(topic("t")).await.unwrap();
    for round in 0..20 {
        let endpoint = format!("q{round}");
        let (x, y) = tokio::join!(
            a.subscribe(sub(&format!("a{round}"), "t", &endpoint)),
            b.subscribe(sub(&format!("b{round}"), "t", &endpoint)),
        );
        let ((x, x_created), (y, y_created)) = (x.unwrap(), y.unwrap());
        assert!(
            x_created ^ y_created,
            "round {round}: exactly one created it"
        );
        assert_eq!(x, y, "round {round}");
    }
    assert_eq!(a.subscriptions(Some("t")).await.unwrap().len(), 20);
}
