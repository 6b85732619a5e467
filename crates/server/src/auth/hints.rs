//! What a refused request asked for, read loosely from its parts for the
//! log only: the action and the queue it named.

/// The action a refused request asked for, for the log only: the JSON
/// target's name, or the Query `Action` of the URL or the form body.
pub fn action_hint(target: Option<&str>, url_query: &str, body: &[u8]) -> String {
    if let Some(t) = target {
        let name = t.rsplit('.').next().unwrap_or(t);
        return name.chars().take(64).collect();
    }
    let from = |bytes: &[u8]| {
        form_urlencoded::parse(bytes)
            .find(|(k, _)| k == "Action")
            .map(|(_, v)| v.into_owned())
    };
    // Bounded: it is the client's text, going to the log.
    let action = from(url_query.as_bytes())
        .or_else(|| from(body))
        .unwrap_or_default();
    action.chars().take(64).collect()
}

/// The longest queue hint a refusal log carries: the client's text.
const MAX_QUEUE_HINT: usize = 128;

/// The queue a refused request named, for the log only: the `QueueUrl` or
/// `QueueName` of its JSON body, of its Query parameters (URL or form
/// body), or the queue URL it was sent to; empty when it names none.
/// Bounded: it is the client's text, going to the log.
pub fn queue_hint(json: bool, path: &str, url_query: &str, body: &[u8]) -> String {
    let named = if json {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct Named {
            queue_url: Option<serde_json::Value>,
            queue_name: Option<serde_json::Value>,
        }
        serde_json::from_slice::<Named>(body).ok().and_then(|n| {
            [n.queue_url, n.queue_name]
                .into_iter()
                .flatten()
                .find_map(|v| v.as_str().map(str::to_string))
        })
    } else {
        let from = |bytes: &[u8]| {
            form_urlencoded::parse(bytes)
                .find(|(k, _)| k == "QueueUrl" || k == "QueueName")
                .map(|(_, v)| v.into_owned())
        };
        from(url_query.as_bytes()).or_else(|| from(body))
    };
    let queue = named.unwrap_or_else(|| {
        // A Query request sent to a queue's URL names it by its path.
        let trimmed = path.trim_matches('/');
        if trimmed.contains('/') {
            trimmed.to_string()
        } else {
            String::new()
        }
    });
    queue.chars().take(MAX_QUEUE_HINT).collect()
}
