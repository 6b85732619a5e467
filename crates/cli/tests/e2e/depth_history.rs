//! M5: every queue's depth sampled over the last hour, read back through
//! GetDepthHistory in both protocols (what the console's sparklines draw).

use serde_json::json;

use crate::alarms::sluice;
use crate::common::{TestServer, create_queue, xml_values};

#[tokio::test]
async fn m5_depth_history_in_both_protocols() {
    let server = TestServer::start().await;
    let sqs = server.sdk();
    let orders = create_queue(&sqs, "orders").await;
    let _quiet = create_queue(&sqs, "quiet").await;
    for i in 0..3 {
        sqs.send_message()
            .queue_url(&orders)
            .message_body(format!("m{i}"))
            .send()
            .await
            .unwrap();
    }
    let first = server.service.now();
    server.service.depth_tick().await;
    server.clock.advance_secs(30);
    sqs.receive_message()
        .queue_url(&orders)
        .send()
        .await
        .unwrap();
    server.service.depth_tick().await;

    let (status, all, r) = sluice(server.raw(), "GetDepthHistory", json!({})).await;
    assert_eq!(status, 200, "{}", r.body);
    assert_eq!(all["IntervalSeconds"], 30);
    let queues = all["Queues"].as_array().expect("queues");
    assert_eq!(queues.len(), 2, "{all}");
    assert_eq!(queues[0]["QueueUrl"], orders.as_str());
    let samples = queues[0]["Samples"].as_array().expect("samples");
    assert_eq!(
        samples[0],
        json!({"Timestamp": first, "Visible": 3, "InFlight": 0, "Delayed": 0})
    );
    assert_eq!(
        samples[1],
        json!({"Timestamp": first + 30_000, "Visible": 2, "InFlight": 1, "Delayed": 0})
    );

    // One queue, in Query.
    let (raw, url) = (server.raw(), orders.clone());
    let xml = tokio::task::spawn_blocking(move || {
        raw.query(
            "/",
            &[("Action", "GetDepthHistory"), ("QueueUrl", url.as_str())],
        )
    })
    .await
    .unwrap();
    assert_eq!(xml.status, 200, "{}", xml.body);
    assert_eq!(xml_values(&xml.body, "QueueUrl"), vec![orders.clone()]);
    assert_eq!(xml_values(&xml.body, "Visible"), vec!["3", "2"]);
    assert_eq!(xml_values(&xml.body, "InFlight"), vec!["0", "1"]);
    assert_eq!(xml.xml("IntervalSeconds").as_deref(), Some("30"));

    // A queue that does not exist is refused as GetQueueAttributes would.
    let missing = orders.replace("orders", "nope");
    let (status, err, _) = sluice(
        server.raw(),
        "GetDepthHistory",
        json!({"QueueUrl": missing}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(err["__type"], "com.amazonaws.sqs#QueueDoesNotExist");

    // A deleted queue loses its history at the next sample.
    sqs.delete_queue().queue_url(&orders).send().await.unwrap();
    server.service.depth_tick().await;
    let (_, after, _) = sluice(server.raw(), "GetDepthHistory", json!({})).await;
    let urls: Vec<_> = after["Queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["QueueUrl"].as_str().unwrap().to_string())
        .collect();
    assert!(!urls.iter().any(|u| u.ends_with("/orders")), "{after}");
}
