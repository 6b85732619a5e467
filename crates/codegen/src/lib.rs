//! Rust source generated from the AWS API models in `models/`, at build
//! time, by the build scripts of `sluice-core` (error codes) and
//! `sluice-protocol` (operations and wire types), as s3s generates its
//! types from the S3 model.
//!
//! Per API ([`api`]): an `Operation` enum, a `Request` enum holding each
//! operation's typed input and a `Response` enum holding its output, a
//! struct per structure shape, and their codecs: serde for the JSON
//! protocol, Query parameters in, XML and the Query protocol's JSON
//! rendering out. Per API's errors ([`errors`]): an `ErrorCode` enum whose
//! methods give each code's Query code, HTTP status, fault and JSON type.
//! What is true of an operation beyond its wire (its IAM action, whether it
//! names a queue, …) is written by hand beside the generated enum, as
//! exhaustive matches, so a new operation does not compile until every
//! fact about it is decided.

pub mod api;
mod emit;
pub mod errors;
pub mod model;
mod names;

pub use api::ApiSpec;
pub use errors::{ErrorTable, ErrorsSpec};
pub use model::{Model, ModelError};

use std::path::Path;

/// Reads and parses a model file, telling cargo to rerun the build
/// script when it changes.
pub fn load(path: &Path) -> Result<Model, ModelError> {
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path)
        .map_err(|e| ModelError(format!("cannot read {}: {e}", path.display())))?;
    Model::parse(&text).map_err(|ModelError(e)| ModelError(format!("{}: {e}", path.display())))
}

/// Reads and parses the error table, as [`load`] does a model.
pub fn load_errors(path: &Path) -> Result<ErrorTable, ModelError> {
    println!("cargo:rerun-if-changed={}", path.display());
    let text = std::fs::read_to_string(path)
        .map_err(|e| ModelError(format!("cannot read {}: {e}", path.display())))?;
    ErrorTable::parse(&text)
}

/// Writes generated source to `OUT_DIR/name`.
pub fn write(name: &str, source: &str) -> Result<(), ModelError> {
    let dir = std::env::var("OUT_DIR").map_err(|_| ModelError("OUT_DIR is not set".into()))?;
    std::fs::write(Path::new(&dir).join(name), source)
        .map_err(|e| ModelError(format!("cannot write {name}: {e}")))
}
