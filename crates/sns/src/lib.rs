//! What SNS means independent of HTTP and storage, for the server's SNS
//! handler and its delivery: [`filter`], subscription filter policies
//! (parsed, checked with SNS's limits and words, and matched against a
//! message's attributes or body); [`delivery_policy`], HTTP/S delivery
//! policies and their retry schedules; [`envelope`], the JSON documents SNS
//! delivers and what it signs of them; [`signing`], the key that signs
//! them and the certificate verifiers fetch.

pub mod delivery_policy;
pub mod envelope;
pub mod filter;
pub mod signing;
