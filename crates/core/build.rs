//! Generates `ErrorCode` from the SQS API models and the error table
//! beside them (models/sluice-errors.json): see crates/codegen.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time: a build script compiled for one checkout may be
    // reused by another sharing the target directory.
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR").ok_or("CARGO_MANIFEST_DIR unset")?;
    let models = Path::new(&manifest_dir).join("../../models");
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
