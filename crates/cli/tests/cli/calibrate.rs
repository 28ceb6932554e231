//! `rdmalab calibrate`: it measures, writes a host profile the model accepts, and its memcpy
//! figure agrees with one this test times itself.

use assert_cmd::Command;
use std::hint::black_box;
use std::time::Instant;

#[test]
fn calibrate_writes_a_profile_with_a_plausible_memcpy_figure() {
    let tmp = tempfile::Builder::new()
        .prefix("rdmalab-calibrate-")
        .tempdir()
        .unwrap();
    let dir = tmp.path();
    let out = dir.join("host.toml");
    let r = Command::cargo_bin("rdmalab")
        .unwrap()
        .args(["calibrate", "--quick", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let stdout = String::from_utf8_lossy(&r.stdout);
    assert!(
        stdout.contains("memcpy bandwidth") && stdout.contains("socket.copy.per_byte_ps"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    let measured = doc["measured"].as_table().unwrap();
    let reported = measured["memcpy_bandwidth [bytes/s]"].as_float().unwrap();
    // Time a memcpy here, the same way: best of five 16 MiB copies.
    let n = 16 << 20;
    let src = vec![1u8; n];
    let mut dst = vec![0u8; n];
    dst.copy_from_slice(&src);
    let ours = (0..5)
        .map(|_| {
            let t = Instant::now();
            dst.copy_from_slice(black_box(&src));
            black_box(&dst);
            n as f64 / t.elapsed().as_secs_f64()
        })
        .fold(0.0, f64::max);
    let ratio = reported / ours;
    // Wide enough for a loaded 2-core CI box (other test binaries run alongside), narrow
    // enough to catch a unit slip (bits for bytes, ns for ps, MiB for bytes).
    assert!(
        (0.2..=5.0).contains(&ratio),
        "calibrate says {reported:.3e} B/s, this test {ours:.3e} B/s"
    );
    // The [profile] table is accepted by the host model and maps memcpy to the copy cost.
    let profile = doc["profile"].as_table().unwrap();
    let per_byte = profile["socket.copy.per_byte_ps"].as_integer().unwrap() as f64;
    assert!((per_byte - 1e12 / reported).abs() <= 1.0);
    let overrides = profile
        .iter()
        .map(|(k, v)| (k.clone(), v.as_integer().unwrap() as u64))
        .collect();
    let mut p = rdmalab::host::HostProfile::default();
    p.apply_overrides(&overrides).unwrap();
    assert_eq!(p.socket.copy.per_byte_ps, per_byte as u64);
}

#[test]
fn unknown_profile_keys_are_named() {
    let mut p = rdmalab::host::HostProfile::default();
    let bad = [("socket.nonsense_ps".to_string(), 1u64)]
        .into_iter()
        .collect();
    let e = p.apply_overrides(&bad).unwrap_err();
    assert!(
        e.to_string().contains("socket.nonsense_ps")
            && e.to_string().contains("control.syscall_ps"),
        "{e}"
    );
}
