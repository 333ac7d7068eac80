//! Issue 2 benchmarks: the `Status` round trip over the socket (goal p50 ≤ 200 µs),
//! `synapse --version` (goal ≤ 5 ms) and `synapse daemon status` against a warm daemon
//! (goal ≤ 10 ms). Needs release binaries: `cargo build --release --bins` first.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use synapse_shared::proto::StatusRequest;
use synapse_shared::proto::daemon_client::DaemonClient;
use synapse_tests::TestEnv;

fn daemon(c: &mut Criterion) {
    let env = TestEnv::new();
    env.start_daemon();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut client = rt.block_on(async { DaemonClient::new(env.channel().await) });

    c.bench_function("status_roundtrip_over_socket", |b| {
        b.iter(|| rt.block_on(client.status(StatusRequest {})).unwrap())
    });
    c.bench_function("synapse_version_process", |b| {
        b.iter(|| {
            let out = env.synapse().arg("--version").output().unwrap();
            assert!(out.status.success());
        })
    });
    c.bench_function("synapse_daemon_status_warm_process", |b| {
        b.iter(|| {
            let out = env.synapse().args(["daemon", "status"]).output().unwrap();
            assert!(out.status.success());
        })
    });
}

criterion_group!(benches, daemon);
criterion_main!(benches);
