//! The SNS topics and subscriptions the engine keeps, in memory and in
//! one file of the data directory, [`TOPICS_FILE`].
//!
//! A [`TopicSet`] is every topic and subscription, with each topic's
//! subscriptions kept in listing order so that a publish reads its
//! topic's without sorting or scanning others. The engine never changes a
//! set in place: a change builds the next set, writes it whole (a
//! temporary file beside the old one, synced, renamed over it, the
//! directory synced) and only then puts it in place of the current one
//! ([`TopicState`]), so readers never wait for a write and never see a
//! change that is not yet on disk. Topics change rarely (a CreateTopic, a
//! Subscribe), so one file rewritten whole costs nothing that matters,
//! and a crash leaves the old file or the new, never a mix. The file is
//! written through the engine's [`Storage`], so the fault-injection tests
//! reach it as they reach the log and the store.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::Path;

use arc_swap::ArcSwap;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use sluice_broker::{Subscription, Topic};
use sluice_core::clock::Millis;

use crate::storage::Storage;

/// The file in the data directory that holds the topics and
/// subscriptions, rewritten whole at each change.
pub const TOPICS_FILE: &str = "topics.json";

/// Where the next version of [`TOPICS_FILE`] is written before it is
/// renamed over it (its name does not end in `.json`: a backup leaves it).
const TOPICS_TMP: &str = "topics.json.tmp";

/// The version of the file's layout this build writes and reads.
const FORMAT: u32 = 1;

/// Every topic and subscription, indexed for the reads publishing makes.
#[derive(Debug, Clone, Default)]
pub(crate) struct TopicSet {
    topics: BTreeMap<String, Topic>,
    /// Each topic's subscriptions, oldest first (ties by id); a topic
    /// without any has no entry.
    by_topic: HashMap<String, Vec<Subscription>>,
    /// Where each subscription is, by id: its topic and its creation time
    /// (its place in the topic's list, with its id).
    places: HashMap<String, (String, Millis)>,
}

/// The engine's topics: the current set, which reads load without a lock,
/// and the lock changes take turns under, each building and writing the
/// next set before it goes in.
#[derive(Default)]
pub(crate) struct TopicState {
    /// The set as last written.
    pub(crate) current: ArcSwap<TopicSet>,
    /// Held from a change's read of the current set until its successor
    /// is in place, so no two changes build on the same set.
    pub(crate) writer: Mutex<()>,
}

/// How a write of the file failed.
#[derive(Debug)]
pub(crate) enum WriteFailure {
    /// Before the new file replaced the old: the old one is what a start
    /// reads.
    Unwritten(io::Error),
    /// After the new file replaced the old, in the directory's sync: a
    /// start reads the new one, unless the machine crashes first.
    Unsynced(io::Error),
}

/// The file's layout as written: the set, in listing order.
#[derive(Serialize)]
struct FileOut<'a> {
    format: u32,
    topics: Vec<&'a Topic>,
    subscriptions: Vec<&'a Subscription>,
}

/// The file's layout as read.
#[derive(Deserialize)]
struct FileIn {
    format: u32,
    topics: Vec<Topic>,
    subscriptions: Vec<Subscription>,
}

/// Where `s` sorts among its topic's subscriptions.
fn order(s: &Subscription) -> (Millis, &str) {
    (s.created_at, s.id.as_str())
}

impl TopicSet {
    /// The topic of `key`.
    pub(crate) fn topic(&self, key: &str) -> Option<&Topic> {
        self.topics.get(key)
    }

    /// Every topic's key, sorted.
    pub(crate) fn keys(&self) -> Vec<String> {
        self.topics.keys().cloned().collect()
    }

    /// The subscription of `id`.
    pub(crate) fn subscription(&self, id: &str) -> Option<&Subscription> {
        let (topic, created_at) = self.places.get(id)?;
        let list = self.by_topic.get(topic)?;
        let at = list
            .binary_search_by(|s| order(s).cmp(&(*created_at, id)))
            .ok()?;
        list.get(at)
    }

    /// The subscriptions of topic `key`, oldest first (ties by id).
    pub(crate) fn subscriptions_of(&self, key: &str) -> &[Subscription] {
        self.by_topic.get(key).map_or(&[], Vec::as_slice)
    }

    /// Every subscription, oldest first (ties by id).
    pub(crate) fn all_subscriptions(&self) -> Vec<&Subscription> {
        let mut all: Vec<&Subscription> = self.by_topic.values().flatten().collect();
        all.sort_unstable_by(|a, b| order(a).cmp(&order(b)));
        all
    }

    /// The subscription of topic `key` with this protocol and endpoint.
    pub(crate) fn same_endpoint(
        &self,
        key: &str,
        protocol: &str,
        endpoint: &str,
    ) -> Option<&Subscription> {
        self.subscriptions_of(key)
            .iter()
            .find(|s| s.protocol == protocol && s.endpoint == endpoint)
    }

    /// Stores `topic`, in place of the one of its key if there is one.
    pub(crate) fn put_topic(&mut self, topic: Topic) {
        self.topics.insert(topic.key.clone(), topic);
    }

    /// Removes the topic of `key` and its subscriptions; whether it was
    /// there.
    pub(crate) fn remove_topic(&mut self, key: &str) -> bool {
        if self.topics.remove(key).is_none() {
            return false;
        }
        for s in self.by_topic.remove(key).unwrap_or_default() {
            self.places.remove(&s.id);
        }
        true
    }

    /// Stores `s` in its topic's list (whose topic the caller checked),
    /// in place of the one of its id and place if there is one.
    pub(crate) fn put_subscription(&mut self, s: Subscription) {
        let list = self.by_topic.entry(s.topic.clone()).or_default();
        self.places
            .insert(s.id.clone(), (s.topic.clone(), s.created_at));
        match list.binary_search_by(|x| order(x).cmp(&order(&s))) {
            Ok(at) => list[at] = s,
            Err(at) => list.insert(at, s),
        }
    }

    /// Removes the subscription of `id`; whether it was there.
    pub(crate) fn remove_subscription(&mut self, id: &str) -> bool {
        let Some((topic, created_at)) = self.places.remove(id) else {
            return false;
        };
        let Some(list) = self.by_topic.get_mut(&topic) else {
            return false;
        };
        if let Ok(at) = list.binary_search_by(|s| order(s).cmp(&(created_at, id))) {
            list.remove(at);
        }
        if list.is_empty() {
            self.by_topic.remove(&topic);
        }
        true
    }

    /// The file's bytes for this set.
    fn encode(&self) -> serde_json::Result<Vec<u8>> {
        serde_json::to_vec_pretty(&FileOut {
            format: FORMAT,
            topics: self.topics.values().collect(),
            subscriptions: self.all_subscriptions(),
        })
    }

    /// The set a file's bytes hold; why not, when they hold none that
    /// this build can serve.
    fn decode(bytes: &[u8]) -> Result<Self, String> {
        let file: FileIn = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if file.format != FORMAT {
            return Err(format!(
                "it is in format {}, this build reads format {FORMAT}: a newer sluice wrote it",
                file.format
            ));
        }
        let mut set = TopicSet::default();
        for topic in file.topics {
            if set.topics.contains_key(&topic.key) {
                return Err(format!("topic {} is in it twice", topic.key));
            }
            set.put_topic(topic);
        }
        for s in file.subscriptions {
            if set.topic(&s.topic).is_none() {
                return Err(format!(
                    "subscription {} is to topic {}, which it does not hold",
                    s.id, s.topic
                ));
            }
            if set.places.contains_key(&s.id) {
                return Err(format!("subscription {} is in it twice", s.id));
            }
            if let Some(other) = set.same_endpoint(&s.topic, &s.protocol, &s.endpoint) {
                return Err(format!(
                    "subscriptions {} and {} are of one endpoint",
                    other.id, s.id
                ));
            }
            set.put_subscription(s);
        }
        Ok(set)
    }
}

/// The set [`TOPICS_FILE`] in `dir` holds: none without the file; why
/// not, when it holds none this build can serve.
pub(crate) fn read(storage: &dyn Storage, dir: &Path) -> Result<TopicSet, String> {
    let path = dir.join(TOPICS_FILE);
    let bytes = match storage.open(&path, false) {
        Ok(file) => file.read_all().map_err(|e| e.to_string())?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(TopicSet::default()),
        Err(e) => return Err(e.to_string()),
    };
    TopicSet::decode(&bytes)
}

/// Makes `set` what [`TOPICS_FILE`] in `dir` holds, durably: written to a
/// temporary file beside it and synced, renamed over it, and the
/// directory synced.
pub(crate) fn write(storage: &dyn Storage, dir: &Path, set: &TopicSet) -> Result<(), WriteFailure> {
    let tmp = dir.join(TOPICS_TMP);
    let written = set
        .encode()
        .map_err(io::Error::other)
        .and_then(|bytes| {
            let file = storage.create(&tmp)?;
            file.write_all_at(&bytes, 0)?;
            file.sync_all()
        })
        .and_then(|()| storage.rename(&tmp, &dir.join(TOPICS_FILE)));
    if let Err(e) = written {
        // Best effort: a later write empties it anyway.
        let _ = storage.remove(&tmp);
        return Err(WriteFailure::Unwritten(e));
    }
    storage.sync_dir(dir).map_err(WriteFailure::Unsynced)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::storage::FaultStorage;

    fn topic(key: &str) -> Topic {
        Topic {
            key: key.into(),
            attributes: BTreeMap::new(),
            tags: BTreeMap::new(),
            created_at: 1,
        }
    }

    fn sub(id: &str, topic: &str, endpoint: &str, created_at: Millis) -> Subscription {
        Subscription {
            id: id.into(),
            topic: topic.into(),
            protocol: "sqs".into(),
            endpoint: endpoint.into(),
            owner: "000000000000".into(),
            attributes: BTreeMap::new(),
            pending_token: None,
            created_at,
        }
    }

    fn ids(subs: &[Subscription]) -> Vec<&str> {
        subs.iter().map(|s| s.id.as_str()).collect()
    }

    fn sample() -> TopicSet {
        let mut set = TopicSet::default();
        set.put_topic(topic("t"));
        set.put_topic(topic("u"));
        set.put_subscription(sub("b", "t", "q1", 20));
        set.put_subscription(sub("a", "t", "q2", 20));
        set.put_subscription(sub("c", "u", "q1", 10));
        set.put_subscription(sub("d", "t", "q3", 5));
        set
    }

    #[test]
    fn each_topic_keeps_its_subscriptions_in_listing_order() {
        let mut set = sample();
        assert_eq!(ids(set.subscriptions_of("t")), ["d", "a", "b"]);
        let all: Vec<&str> = set.all_subscriptions().iter().map(|s| &*s.id).collect();
        assert_eq!(all, ["d", "c", "a", "b"]);
        assert_eq!(set.subscription("a").unwrap().endpoint, "q2");
        assert_eq!(set.same_endpoint("t", "sqs", "q3").unwrap().id, "d");
        assert!(set.same_endpoint("u", "sqs", "q3").is_none());

        let mut changed = sub("a", "t", "q2", 20);
        changed.pending_token = Some("x".into());
        set.put_subscription(changed.clone());
        assert_eq!(set.subscription("a"), Some(&changed));
        assert_eq!(ids(set.subscriptions_of("t")), ["d", "a", "b"]);

        assert!(set.remove_subscription("a"));
        assert!(!set.remove_subscription("a"));
        assert!(set.subscription("a").is_none());
        assert!(set.remove_topic("t"));
        assert!(!set.remove_topic("t"));
        assert!(set.subscription("b").is_none() && set.subscription("d").is_none());
        assert!(set.subscriptions_of("t").is_empty());
        assert_eq!(set.keys(), ["u"]);
    }

    #[test]
    fn a_set_reads_back_as_written_and_a_missing_file_is_no_topics() {
        let storage = FaultStorage::new();
        let dir = Path::new("/data");
        storage.create_dir_all(dir).unwrap();
        assert!(read(&storage, dir).unwrap().keys().is_empty());
        let set = sample();
        write(&storage, dir, &set).unwrap();
        let back = read(&storage, dir).unwrap();
        assert_eq!(back.keys(), ["t", "u"]);
        assert_eq!(back.subscriptions_of("t"), set.subscriptions_of("t"));
        assert_eq!(back.subscription("c"), set.subscription("c"));
        assert!(!storage.exists(&dir.join(TOPICS_TMP)).unwrap());
        // Only what was synced, the rename's directory entry included.
        let after = storage.after_crash();
        assert_eq!(read(&after, dir).unwrap().keys(), ["t", "u"]);
    }

    #[test]
    fn a_file_that_holds_no_usable_set_says_why() {
        let cases: [(&str, &str); 5] = [
            ("{not json", "key must be a string"),
            (
                r#"{"format": 2, "topics": [], "subscriptions": []}"#,
                "format 2",
            ),
            (
                r#"{"format": 1, "topics": [], "subscriptions": [{"id": "s", "topic": "t",
                "protocol": "sqs", "endpoint": "q", "owner": "o", "attributes": {},
                "pending_token": null, "created_at": 1}]}"#,
                "subscription s is to topic t",
            ),
            (
                r#"{"format": 1, "topics": [
                {"key": "t", "attributes": {}, "tags": {}, "created_at": 1},
                {"key": "t", "attributes": {}, "tags": {}, "created_at": 2}],
                "subscriptions": []}"#,
                "topic t is in it twice",
            ),
            (r#"{"format": 1}"#, "missing field"),
        ];
        for (bytes, why) in cases {
            let e = TopicSet::decode(bytes.as_bytes()).unwrap_err();
            assert!(e.contains(why), "{bytes}: {e}");
        }
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let storage = FaultStorage::new();
        let dir = Path::new("/data");
        storage.create_dir_all(dir).unwrap();
        write(&storage, dir, &sample()).unwrap();
        let mut next = sample();
        next.put_topic(topic("v"));
        storage.fail_sync_of(TOPICS_TMP);
        assert!(matches!(
            write(&storage, dir, &next),
            Err(WriteFailure::Unwritten(_))
        ));
        assert!(!storage.exists(&dir.join(TOPICS_TMP)).unwrap());
        assert_eq!(read(&storage, dir).unwrap().keys(), ["t", "u"]);
        assert_eq!(
            read(&storage.after_crash(), dir).unwrap().keys(),
            ["t", "u"]
        );
        storage.fail_write_of(TOPICS_TMP);
        assert!(write(&storage, dir, &next).is_err());
        write(&storage, dir, &next).unwrap();
        assert_eq!(read(&storage, dir).unwrap().keys(), ["t", "u", "v"]);
    }
}
