//! Generates each API's operations and wire types from the models in
//! `models/` (see crates/codegen): SQS, sluice's own actions (served in
//! SQS's protocols, with shapes of SQS's model), and SNS.

use std::path::Path;

use sluice_codegen::{ApiSpec, api};

/// SQS's batch entry lists: more than ten entries are refused while the
/// JSON body is parsed, before anything is built of them (rule L8).
const SQS_BATCHES: &[&str] = &[
    "SendMessageBatchRequestEntryList",
    "DeleteMessageBatchRequestEntryList",
    "ChangeMessageVisibilityBatchRequestEntryList",
];

/// How AWS renders ReceiveMessage's list in the Query protocol's JSON:
/// `messages`, not the model's `Messages` (rule W9; AWS-validated
/// assertion, LocalStack test_sqs.py::test_marker_serialization_json_protocol).
const SQS_QUERY_JSON_NAMES: &[(&str, &str, &str)] =
    &[("ReceiveMessageResult", "Messages", "messages")];

/// The batch answers' lists, required by the model, which SQS leaves out
/// when empty (rule V23).
const SQS_OMIT_EMPTY: &[(&str, &str)] = &[
    ("SendMessageBatchResult", "Successful"),
    ("SendMessageBatchResult", "Failed"),
    ("DeleteMessageBatchResult", "Successful"),
    ("DeleteMessageBatchResult", "Failed"),
    ("ChangeMessageVisibilityBatchResult", "Successful"),
    ("ChangeMessageVisibilityBatchResult", "Failed"),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time: a build script compiled for one checkout may be
    // reused by another sharing the target directory.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR unset")?;
    let models = Path::new(&manifest_dir).join("../../models");
    let sqs_query = sluice_codegen::load(&models.join("sqs-query-service-2.json"))?;
    let sqs_json = sluice_codegen::load(&models.join("sqs-service-2.json"))?;
    let extensions = sluice_codegen::load(&models.join("sluice-extensions.json"))?;
    let sns = sluice_codegen::load(&models.join("sns-service-2.json"))?;

    let sqs = api::generate(&ApiSpec {
        title: "SQS",
        model: &sqs_query,
        docs: Some(&sqs_json),
        base: None,
        json_target_prefix: Some("AmazonSQS"),
        bounded_lists: SQS_BATCHES,
        query_json_names: SQS_QUERY_JSON_NAMES,
        omit_empty: SQS_OMIT_EMPTY,
        empty_lists_written: false,
    })?;
    sluice_codegen::write("sqs.rs", &sqs)?;

    let sluice = api::generate(&ApiSpec {
        title: "sluice's own actions",
        model: &extensions,
        docs: None,
        base: Some((&sqs_query, "crate::sqs")),
        json_target_prefix: Some("Sluice"),
        bounded_lists: &[],
        query_json_names: &[],
        omit_empty: &[],
        empty_lists_written: false,
    })?;
    sluice_codegen::write("sluice.rs", &sluice)?;

    let sns = api::generate(&ApiSpec {
        title: "SNS",
        model: &sns,
        docs: None,
        base: None,
        json_target_prefix: None,
        bounded_lists: &[],
        query_json_names: &[],
        omit_empty: &[],
        empty_lists_written: true,
    })?;
    sluice_codegen::write("sns.rs", &sns)?;

    let sns_model = sluice_codegen::load(&models.join("sns-service-2.json"))?;
    let sns_table = sluice_codegen::load_errors(&models.join("sns-errors.json"))?;
    let sns_errors = sluice_codegen::errors::generate(&sluice_codegen::ErrorsSpec {
        title: "SNS",
        model: &sns_model,
        codes: None,
        table: &sns_table,
    })?;
    sluice_codegen::write("sns_errors.rs", &sns_errors)?;
    Ok(())
}
