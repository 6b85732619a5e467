//! Generates `ErrorCode` from the SQS API models and the error table
//! beside them (models/sluice-errors.json): see crates/codegen.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let json = sluice_codegen::load(&models.join("sqs-service-2.json"))?;
    let query = sluice_codegen::load(&models.join("sqs-query-service-2.json"))?;
    let table = sluice_codegen::load_errors(&models.join("sluice-errors.json"))?;
    let source = sluice_codegen::errors::generate(&sluice_codegen::ErrorsSpec {
        title: "SQS",
        model: &json,
        codes: Some(&query),
        table: &table,
    })?;
    sluice_codegen::write("sqs_errors.rs", &source)?;
    Ok(())
}
