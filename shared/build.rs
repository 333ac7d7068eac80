//! Compiles proto/synapse.proto. protoc comes from `PROTOC` when set, else from the
//! vendored binary, so a fresh machine needs no system protoc.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "../proto/synapse.proto";
    println!("cargo:rerun-if-changed={proto}");
    println!("cargo:rerun-if-env-changed=PROTOC");
    let mut config = tonic_prost_build::Config::new();
    if std::env::var_os("PROTOC").is_none() {
        config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    }
    tonic_prost_build::configure().compile_with_config(config, &[proto], &["../proto"])?;
    Ok(())
}
