//! `rdmalab serve`: prints its URL, answers on 127.0.0.1, stops cleanly on Ctrl-C (SIGINT).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn http_get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serve_prints_its_url_answers_and_stops_on_ctrl_c() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    // "rdmalab lab: http://127.0.0.1:PORT/  (Ctrl-C stops it)"
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"));
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "binds to localhost: {addr}");
    let home = http_get(&addr, "/");
    assert!(home.starts_with("HTTP/1.1 200"), "{home}");
    assert!(home.contains("/assets/app.js"));
    let presets = http_get(&addr, "/api/presets");
    assert!(presets.contains("lesson5b"), "{presets}");
    // Ctrl-C: a graceful stop with exit status 0.
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(code.success(), "{code}");
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    assert!(rest.contains("stopped"), "{rest}");
}

#[test]
fn a_port_in_use_is_bad_input() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["serve", "--port", &port])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot listen") && err.contains("--port"),
        "{err}"
    );
}

/// Starts `rdmalab serve --port 0 ARGS` and returns it with its address.
fn start(
    args: &[&str],
) -> (
    std::process::Child,
    String,
    BufReader<std::process::ChildStdout>,
) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmalab"))
        .args(["serve", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    (child, addr, out)
}

/// Issue 21: a foreign Host is refused (DNS rebinding), pages carry the security headers, and
/// SIGTERM stops the server within a bound even with a half-sent request open.
#[test]
fn serve_refuses_foreign_hosts_and_stops_on_sigterm_within_a_bound() {
    let (mut child, addr, _out) = start(&[]);
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET /api/presets HTTP/1.1\r\nHost: rebind.example\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 421"), "{answer}");
    assert!(answer.contains("\"field\":\"Host\""), "{answer}");
    let home = http_get(&addr, "/");
    let lower = home.to_ascii_lowercase();
    assert!(lower.contains("x-content-type-options: nosniff"), "{home}");
    assert!(lower.contains("content-security-policy:"), "{home}");
    // A request whose head never finishes, then SIGTERM.
    let mut half = TcpStream::connect(&addr).unwrap();
    write!(half, "GET / HTTP/1.1\r\nHost: {addr}\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let start = Instant::now();
    assert!(
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "SIGTERM did not stop the server within its grace"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(code.success(), "{code}");
    drop(half);
}

/// Issue 21: binding beyond loopback says, at start, that the lab is open to the network.
#[test]
fn a_non_loopback_bind_warns_at_startup() {
    let (child, _addr, _out) = start(&["--bind", "0.0.0.0"]);
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning") && err.contains("no authentication"),
        "{err}"
    );
}
